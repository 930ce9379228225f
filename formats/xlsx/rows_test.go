package xlsx

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// chunkReader gives its data n bytes at a time, so that every token of
// the sheet XML is split across reads somewhere.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n, len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// scanSheetText reads sheet XML with readRows and writes down every
// row it passes on, up to stopAfter rows (0: all).
func scanSheetText(t *testing.T, r io.Reader, stopAfter int) string {
	t.Helper()
	var b strings.Builder
	n := 0
	err := readRows(r, func(row int, cells []RawCell) bool {
		fmt.Fprintf(&b, "%d:", row)
		for _, c := range cells {
			fmt.Fprintf(&b, " [%d %d %q v=%q/%v f=%v is=%q]", c.Col, c.Style, c.Type, c.Value, c.hasV, c.formula, c.Inline)
		}
		b.WriteByte('\n')
		n++
		return n != stopAfter
	}, nil)
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	return b.String()
}

// testSheet returns worksheet XML of rows rows with the constructs the
// reader handles: references and none, styles, shared and inline strings
// (in runs, with phonetic runs, entities and CDATA), formulas with and
// without a cached value, self-closing cells and rows, comments.
func testSheet(rows int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	b.WriteString(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:x14ac="x"><dimension ref="A1:F9"/><sheetData>`)
	for r := 1; r <= rows; r++ {
		switch r % 7 {
		case 0:
			fmt.Fprintf(&b, `<row r="%d"/>`, r)
			continue
		case 3:
			b.WriteString(`<!-- a comment, with <tags> -->`)
		}
		fmt.Fprintf(&b, `<row r="%d" spans="1:6" x14ac:dyDescent="0.25">`, r)
		fmt.Fprintf(&b, `<c r="A%d" s="1" t="s"><v>%d</v></c>`, r, r%3)
		fmt.Fprintf(&b, `<c t="inlineStr"><is><r><t>plan &amp; co %d</t></r><rPh><t>x</t></rPh><r><t xml:space="preserve"> &#x41;&lt;</t></r></is></c>`, r)
		fmt.Fprintf(&b, `<c r="D%d"><f>SUM(A1:A2)</f><v>%d</v></c>`, r, r*7)
		fmt.Fprintf(&b, `<c r="E%d" t="str"><f>"x"</f></c>`, r)
		fmt.Fprintf(&b, `<c r="F%d" t="inlineStr"><is><t><![CDATA[a<b>]]></t></is></c><c r="G%d"/>`, r, r)
		b.WriteString(`</row>`)
	}
	b.WriteString(`</sheetData><pageMargins left="0.7"/></worksheet>`)
	return b.Bytes()
}

// TestFlatReadRowsChunks reads the same sheet XML in reads of every size
// (one byte, a few, more than the buffer): the rows must not depend on
// where the reads split the tokens, nor on how rows fall into batches.
func TestFlatReadRowsChunks(t *testing.T) {
	sheet := testSheet(3*batchRows + 5)
	want := scanSheetText(t, bytes.NewReader(sheet), 0)
	if n := strings.Count(want, "\n"); n != 3*batchRows+5 {
		t.Fatalf("%d rows read, want %d:\n%s", n, 3*batchRows+5, want)
	}
	// The runs of an inline string are joined, phonetic ones included.
	if !strings.Contains(want, `[1 1 "s" v="1"/true f=false is=""] [2 0 "inlineStr" v=""/false f=false is="plan & co 1x A<"]`) ||
		!strings.Contains(want, `[4 0 "" v="7"/true f=true is=""]`) ||
		!strings.Contains(want, `[6 0 "inlineStr" v=""/false f=false is="a<b>"]`) ||
		!strings.Contains(want, "7:\n") {
		t.Fatalf("cells not read as written:\n%s", want[:min(len(want), 2000)])
	}
	for _, n := range []int{1, 2, 3, 7, 100, 4096, len(sheet)} {
		if got := scanSheetText(t, &chunkReader{sheet, n}, 0); got != want {
			t.Fatalf("reads of %d bytes give other rows:\n%s\nwant\n%s", n, got, want)
		}
	}
	// Stopping early, within and at the end of a batch, passes on exactly
	// the rows before.
	for _, stop := range []int{1, batchRows - 1, batchRows, batchRows + 1, 2*batchRows + 3} {
		got := scanSheetText(t, &chunkReader{sheet, 5}, stop)
		if n := strings.Count(got, "\n"); n != stop || !strings.HasPrefix(want, got) {
			t.Fatalf("stopping after %d rows: got %d rows\n%s", stop, n, got)
		}
	}
}

// TestFlatReadRowsBroken: a sheet cut short or malformed ends the scan
// with an error after the rows before it, whatever the batches.
func TestFlatReadRowsBroken(t *testing.T) {
	sheet := testSheet(2*batchRows + 10)
	cut := sheet[:len(sheet)*3/4]
	cut = cut[:bytes.LastIndex(cut, []byte("<c "))+2] // inside a tag
	for _, n := range []int{1, 13, len(cut)} {
		got := scanSheetText(t, &chunkReader{cut, n}, 0)
		if !strings.HasSuffix(got, "error: "+errDamaged.Error()+"\n") || !strings.HasPrefix(scanSheetText(t, bytes.NewReader(sheet), 0), strings.TrimSuffix(got, "error: "+errDamaged.Error()+"\n")) || strings.Count(got, "\n") < 3*batchRows/2 {
			t.Fatalf("cut sheet, reads of %d: %s", n, got[max(0, len(got)-500):])
		}
	}
}

// TestFlatPlainNumber checks the shortcut for plain integers against what
// it stands for: strconv.ParseFloat and strconv.FormatFloat(n, 'f', -1, 64).
func TestFlatPlainNumber(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.StringMatching(`[0-9]{1,17}`),
			rapid.StringMatching(`[-+0-9.eE ]{0,8}`),
			rapid.Map(rapid.Int64Range(0, 1<<53), func(n int64) string { return strconv.FormatInt(n, 10) }),
		).Draw(t, "s")
		n, text, plain := plainNumber([]byte(s))
		if !plain {
			return
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f != n || strconv.FormatFloat(f, 'f', -1, 64) != text {
			t.Fatalf("plainNumber(%q) = %v %q; strconv gives %v %q (%v)", s, n, text, f, strconv.FormatFloat(f, 'f', -1, 64), err)
		}
	})
}
