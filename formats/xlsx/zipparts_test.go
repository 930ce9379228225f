package xlsx

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// zpWrite writes a first part, then the parts of jobs (two a job, the
// first of them large) through ZipParts with workers, renamed, then a
// last part, to a zip on w, and returns the first error.
func zpWrite(w io.Writer, jobs, workers int, fail func(job int) error) error {
	zp := NewZipParts(jobs, workers, 4, func(i int, set *ZipPartSet) error {
		if fail != nil {
			if err := fail(i); err != nil {
				return err
			}
		}
		fmt.Fprintf(set.Create(fmt.Sprintf("part%d.xml", i)), "<p n=\"%d\">%s</p>", i, strings.Repeat("ab", 1000*(i%7)))
		fmt.Fprintf(set.Create(fmt.Sprintf("é/part%d.rels", i)), "rels %d", i)
		return nil
	})
	zw := NewZipWriter(w)
	first, err := zw.Create("first.xml")
	if err != nil {
		return err
	}
	io.WriteString(first, "start")
	if err := zp.WriteTo(zw, func(s string) string { return "x/" + s }); err != nil {
		return err
	}
	last, err := zw.Create("last.xml")
	if err != nil {
		return err
	}
	io.WriteString(last, "end")
	return zw.Close()
}

// TestZipPartsInOrder: the parts of jobs run on several workers are
// written in the order the jobs were added, each readable with its
// content and checksum, and the zip writer goes on after them.
func TestZipPartsInOrder(t *testing.T) {
	for _, workers := range []int{1, 3} {
		var buf bytes.Buffer
		if err := zpWrite(&buf, 50, workers, nil); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if len(zr.File) != 102 {
			t.Fatalf("%d parts, want 102", len(zr.File))
		}
		for k, f := range zr.File {
			i := (k - 1) / 2
			want := fmt.Sprintf("<p n=\"%d\">%s</p>", i, strings.Repeat("ab", 1000*(i%7)))
			name := fmt.Sprintf("x/part%d.xml", i)
			if k%2 == 0 {
				want, name = fmt.Sprintf("rels %d", i), fmt.Sprintf("x/é/part%d.rels", i)
			}
			switch k {
			case 0:
				want, name = "start", "first.xml"
			case 101:
				want, name = "end", "last.xml"
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc) // checks the CRC-32
			rc.Close()
			if err != nil || f.Name != name || string(got) != want {
				t.Fatalf("workers %d, part %d: %s %q (%v), want %s %q", workers, k, f.Name, got, err, name, want)
			}
		}
	}
}

// zpFailWriter fails every write after limit bytes.
type zpFailWriter struct{ n, limit int }

func (w *zpFailWriter) Write(b []byte) (int, error) {
	if w.n+len(b) > w.limit {
		return 0, errors.New("no space left on device")
	}
	w.n += len(b)
	return len(b), nil
}

// TestZipPartsErrors: a job's error, or the output's, is returned and
// stops the jobs after it; nothing blocks, nor when the parts are closed
// unwritten.
func TestZipPartsErrors(t *testing.T) {
	boom := errors.New("boom")
	var buf bytes.Buffer
	err := zpWrite(&buf, 40, 2, func(i int) error {
		if i == 17 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the job's", err)
	}
	for _, n := range []int{0, 3, 100} {
		zp := NewZipParts(n, 2, 4, func(int, *ZipPartSet) error { return nil })
		zp.Close()
	}
	full := &zpFailWriter{limit: 1 << 30}
	if err := zpWrite(full, 40, 2, nil); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 100, full.n / 2, full.n - 30, full.n - 1} {
		if err := zpWrite(&zpFailWriter{limit: limit}, 40, 2, nil); err == nil || !strings.Contains(err.Error(), "no space") {
			t.Fatalf("limit %d: err = %v", limit, err)
		}
	}
}
