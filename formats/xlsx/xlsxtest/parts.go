package xlsxtest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xuri/excelize/v2"
)

// SmallFlat returns a small flat workbook written by excelize, for seeds.
func SmallFlat(tb testing.TB, mutate func(f *excelize.File)) []byte {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	_ = f.SetSheetName("Sheet1", "Targets")
	_ = f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_african_male_top_managers"})
	_ = f.SetSheetRow("Targets", "A2", &[]any{"Fuzz Plan", "2025-09-01", "2030-08-31", 1, "all_employees", 3})
	_ = f.SetSheetRow("Targets", "A3", &[]any{"Fuzz Plan", "2025-09-01", "2030-08-31", 1, "disabled_employees", "1"})
	if mutate != nil {
		mutate(f)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Parts returns a workbook's parts by name.
func Parts(tb testing.TB, data []byte) map[string][]byte {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = b
	}
	return out
}

// Zip writes parts as a zip archive, in name order.
func Zip(parts map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(parts)) {
		w, _ := zw.Create(name)
		_, _ = w.Write(parts[name])
	}
	_ = zw.Close()
	return buf.Bytes()
}

// SheetData writes a small workbook whose sheet holds rows (the XML
// inside <sheetData>) as name in a temporary folder and returns its path.
func SheetData(t testing.TB, name, rows string) string {
	t.Helper()
	parts := Parts(t, SmallFlat(t, nil))
	parts[SheetPart] = []byte(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + rows + `</sheetData></worksheet>`)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, Zip(parts), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The parts of SmallFlat that tests replace.
const (
	SheetPart  = "xl/worksheets/sheet1.xml"
	SSTPart    = "xl/sharedStrings.xml"
	StylesPart = "xl/styles.xml"
)

// Part is a zip part made of a Prefix, a Chunk repeated N times and a
// Suffix, deflated without ever holding the whole: the chunk is
// compressed once and its deflate blocks are repeated (a sync flush ends
// them on a byte boundary, and blocks compressed on their own stay valid
// after any history).
type Part struct {
	Prefix, Chunk, Suffix []byte
	N                     int
}

func (p Part) size() uint64 {
	return uint64(len(p.Prefix)) + uint64(len(p.Chunk))*uint64(p.N) + uint64(len(p.Suffix))
}

// deflated returns the part's compressed blocks: prefix, chunk (to repeat)
// and suffix (with the final block).
func (p Part) deflated(tb testing.TB) (pre, chunk, suf []byte) {
	tb.Helper()
	compress := func(b []byte, final bool) []byte {
		var buf bytes.Buffer
		fw, err := flate.NewWriter(&buf, flate.BestCompression)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = fw.Write(b)
		if final {
			_ = fw.Close()
		} else {
			_ = fw.Flush()
		}
		return buf.Bytes()
	}
	return compress(p.Prefix, false), compress(p.Chunk, false), compress(p.Suffix, true)
}

// WriteHostile writes a workbook of the parts small with those of big
// added or put in their place (deflated as they are made: a part of
// gigabytes costs no memory), and returns its path.
func WriteHostile(tb testing.TB, dir, name string, small map[string][]byte, big map[string]Part) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	names := slices.Sorted(maps.Keys(small))
	for n := range big {
		if _, ok := small[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		p, ok := big[n]
		if !ok {
			w, _ := zw.Create(n)
			_, _ = w.Write(small[n])
			continue
		}
		pre, chunk, suf := p.deflated(tb)
		crc := crc32.Update(0, crc32.IEEETable, p.Prefix)
		for range p.N {
			crc = crc32.Update(crc, crc32.IEEETable, p.Chunk)
		}
		crc = crc32.Update(crc, crc32.IEEETable, p.Suffix)
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, CRC32: crc, UncompressedSize64: p.size(),
			CompressedSize64: uint64(len(pre)) + uint64(len(chunk))*uint64(p.N) + uint64(len(suf))}
		w, err := zw.CreateRaw(h)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = w.Write(pre)
		for range p.N {
			_, _ = w.Write(chunk)
		}
		_, _ = w.Write(suf)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}
