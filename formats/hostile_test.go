package formats

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// hostilePart is a zip part made of a prefix, a chunk repeated n times
// and a suffix, deflated without ever holding the whole: the chunk is
// compressed once and its deflate blocks are repeated (a sync flush ends
// them on a byte boundary, and blocks compressed on their own stay valid
// after any history).
type hostilePart struct {
	prefix, chunk, suffix []byte
	n                     int
}

func (p hostilePart) size() uint64 {
	return uint64(len(p.prefix)) + uint64(len(p.chunk))*uint64(p.n) + uint64(len(p.suffix))
}

// deflated returns the part's compressed blocks: prefix, chunk (to repeat)
// and suffix (with the final block).
func (p hostilePart) deflated(tb testing.TB) (pre, chunk, suf []byte) {
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
	return compress(p.prefix, false), compress(p.chunk, false), compress(p.suffix, true)
}

// writeHostileXLSX writes a workbook of the small flat workbook's parts
// with some replaced, and returns its path.
func writeHostileXLSX(tb testing.TB, dir, name string, small map[string][]byte, big map[string]hostilePart) string {
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
		crc := crc32.Update(0, crc32.IEEETable, p.prefix)
		for range p.n {
			crc = crc32.Update(crc, crc32.IEEETable, p.chunk)
		}
		crc = crc32.Update(crc, crc32.IEEETable, p.suffix)
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, CRC32: crc, UncompressedSize64: p.size(),
			CompressedSize64: uint64(len(pre)) + uint64(len(chunk))*uint64(p.n) + uint64(len(suf))}
		w, err := zw.CreateRaw(h)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = w.Write(pre)
		for range p.n {
			_, _ = w.Write(chunk)
		}
		_, _ = w.Write(suf)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// hostileBomb is one of the decompression bombs docs/limits.md bounds.
type hostileBomb struct {
	name  string
	part  string
	make  func() hostilePart
	want  string // in the error
	limit int64  // Limits.MaxUncompressed; 0 for the default
}

var hostileBombs = []hostileBomb{
	{"whitespace.xlsx", fuzzSheetPart, func() hostilePart {
		// A sheet with 2 GiB of whitespace.
		return hostilePart{prefix: []byte(`<worksheet><sheetData>`), chunk: bytes.Repeat([]byte(" "), 1<<20), n: 2048, suffix: []byte(`</sheetData></worksheet>`)}
	}, "unpacks to 2.0 GiB, more than the limit of 1 GiB", 0},
	{"whitespace-limit-raised.xlsx", fuzzSheetPart, func() hostilePart {
		// The same read with --max-uncompressed 4G: the token bound stops it.
		return hostilePart{prefix: []byte(`<worksheet><sheetData>`), chunk: bytes.Repeat([]byte(" "), 1<<20), n: 2048, suffix: []byte(`</sheetData></worksheet>`)}
	}, "one XML token", 4 << 30},
	{"wide-row.xlsx", fuzzSheetPart, func() hostilePart {
		// One row of 1,000,000 cells.
		return hostilePart{prefix: []byte(`<worksheet><sheetData><row r="1">`), chunk: bytes.Repeat([]byte(`<c><v>1</v></c>`), 1000), n: 1000, suffix: []byte(`</row></sheetData></worksheet>`)}
	}, "more than 16384 cells", 0},
	{"sst.xlsx", fuzzSSTPart, func() hostilePart {
		// A shared string table of 1 GiB (less a little, so that only
		// the table's own bounds stop it).
		unit := []byte(`<si><t>` + strings.Repeat("x", 1000) + `</t></si>`)
		return hostilePart{prefix: []byte(`<sst>`), chunk: bytes.Repeat(unit, 1000), n: (1<<30 - (4 << 20)) / (1000 * len(unit)), suffix: []byte(`</sst>`)}
	}, "holds more than 64 MiB of text", 0},
	{"grid-sheet.xlsx", fuzzSheetPart, func() hostilePart {
		// A grid plan sheet (a grid label above a header of races) that
		// unpacks to 768 MiB, within the workbook's limit of 1 GiB but
		// not a grid plan sheet's 8 MiB.
		chunk := bytes.Repeat([]byte(`<row><c t="inlineStr"><is><t>Year 1 all employees</t></is></c><c><v>7</v></c></row>`), 1<<13)
		return hostilePart{prefix: []byte(hostileGridTop), chunk: chunk, n: 768 << 20 / len(chunk), suffix: []byte(`</sheetData></worksheet>`)}
	}, "more than the 8 MiB a grid plan sheet may", 0},
}

// hostileGridTop is the top of a grid plan sheet: a grid label in A1 and a
// header of races below it.
const hostileGridTop = `<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Year 1: All employees</t></is></c></row>` +
	`<row r="2"><c r="B2" t="inlineStr"><is><t>African</t></is></c><c r="C2" t="inlineStr"><is><t>Coloured</t></is></c></row>`

// TestHostileBombs reads each decompression bomb: an error that says the
// file is oversized, and (measured in a process of its own) peak memory
// under 200 MB.
func TestHostileBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a few megabytes of bombs")
	}
	dir := t.TempDir()
	small := xlsxParts(t, smallFlatXLSX(t, nil))
	for _, b := range hostileBombs {
		t.Run(b.name, func(t *testing.T) {
			path := writeHostileXLSX(t, dir, b.name, small, map[string]hostilePart{b.part: b.make()})
			st, _ := os.Stat(path)
			peak, out := hostileReadInProcess(t, path, b.limit)
			t.Logf("%s: %s zip, peak RSS %.1f MB", b.name, xlsx.SizeText(st.Size()), float64(peak)/1e6)
			if !strings.Contains(out, "error") || !strings.Contains(out, b.want) || !strings.Contains(out, "oversized") {
				t.Errorf("problems:\n%s\nwant an oversized-file error with %q", out, b.want)
			}
			if peak > 200e6 && !hostileRace {
				t.Errorf("peak RSS %.1f MB, want under 200 MB", float64(peak)/1e6)
			}
		})
	}
}

// BenchmarkHostileBombs reports the peak resident memory of reading each
// decompression bomb (in a process of its own), as peak-MB.
func BenchmarkHostileBombs(b *testing.B) {
	dir := b.TempDir()
	small := xlsxParts(b, smallFlatXLSX(b, nil))
	for _, bomb := range hostileBombs {
		path := writeHostileXLSX(b, dir, bomb.name, small, map[string]hostilePart{bomb.part: bomb.make()})
		b.Run(bomb.name, func(b *testing.B) {
			var peak int64
			for b.Loop() {
				p, _ := hostileReadInProcess(b, path, bomb.limit)
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
		})
	}
}

// hostileReadInProcess reads path with ReadFiles in a child process (this
// test binary, TestHostileHelperProcess) and returns the child's peak
// resident memory and its problems as text.
func hostileReadInProcess(t testing.TB, path string, limit int64) (peak int64, out string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileHelperProcess$")
	cmd.Env = append(os.Environ(), "EEPIPE_HOSTILE_FILE="+path, "EEPIPE_HOSTILE_LIMIT="+strconv.FormatInt(limit, 10))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\n%s", err, buf.String())
	}
	peak, out = hostilePeakRSS(cmd.ProcessState), buf.String()
	// The child's own high-water mark (VmHWM, per process image): the
	// rusage figure also holds the parent's peak at the fork, so a test
	// that ran before in this binary would count.
	if before, after, ok := strings.Cut(out, "hostile-peak-kb "); ok {
		line, rest, _ := strings.Cut(after, "\n")
		if kb, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64); err == nil {
			peak, out = kb<<10, before+rest
		}
	}
	return peak, out
}

// TestHostileHelperProcess is the child of hostileReadInProcess.
func TestHostileHelperProcess(t *testing.T) {
	path := os.Getenv("EEPIPE_HOSTILE_FILE")
	if path == "" {
		t.Skip("helper process")
	}
	limit, _ := strconv.ParseInt(os.Getenv("EEPIPE_HOSTILE_LIMIT"), 10, 64)
	batch, err := ReadFiles([]string{path}, ReadOptions{Limits: xlsx.Limits{MaxUncompressed: limit}})
	if err != nil {
		fmt.Println("ReadFiles:", err)
		return
	}
	for _, p := range batch.Problems {
		fmt.Println(p.String())
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				fmt.Println("hostile-peak-kb", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			}
		}
	}
}

// TestHostileLimits checks each bound on files small enough to build in
// memory: the token, the cell, the row, the total size (with a lower
// limit), the metadata parts and the shared strings.
func TestHostileLimits(t *testing.T) {
	small := xlsxParts(t, smallFlatXLSX(t, nil))
	sheet := func(rows string) []byte {
		return []byte(`<worksheet><sheetData>` + rows + `</sheetData></worksheet>`)
	}
	header := `<row r="1"><c r="A1" t="inlineStr"><is><t>plan_name</t></is></c><c r="B1" t="inlineStr"><is><t>target_type</t></is></c></row>`
	cases := []struct {
		name  string
		parts map[string][]byte
		lim   xlsx.Limits
		want  string
		cell  string // the error's cell, when it has one
	}{
		{"token", map[string][]byte{fuzzSheetPart: sheet(header + `<row r="2">` + strings.Repeat(" ", 3<<20) + `</row>`)}, xlsx.Limits{}, "one XML token", ""},
		{"token in a cell", map[string][]byte{fuzzSheetPart: sheet(header + `<row r="2"><c r="A2" t="inlineStr"><is><t>` + strings.Repeat("y", 2<<20) + `</t></is></c></row>`)}, xlsx.Limits{}, "one XML token", ""},
		{"cell text", map[string][]byte{fuzzSheetPart: sheet(header + `<row r="2"><c r="A2" t="inlineStr"><is><t>` + strings.Repeat("é", xlsx.MaxCellChars+1) + `</t></is></c></row>`)}, xlsx.Limits{}, "more than 32767 characters", "A2"},
		{"cell text in runs", map[string][]byte{fuzzSheetPart: sheet(header + `<row r="2"><c r="A2" t="inlineStr"><is>` + strings.Repeat(`<r><t>`+strings.Repeat("z", 1000)+`</t></r>`, 200) + `</is></c></row>`)}, xlsx.Limits{}, "more than 32767 characters", "A2"},
		{"row width", map[string][]byte{fuzzSheetPart: sheet(header + `<row r="2">` + strings.Repeat(`<c/>`, xlsx.MaxRowCells+1) + `</row>`)}, xlsx.Limits{}, "more than 16384 cells", ""},
		{"rows", map[string][]byte{fuzzSheetPart: sheet(header + strings.Repeat(`<row/>`, 1<<20))}, xlsx.Limits{}, "more than 1048576 rows", ""},
		{"total", map[string][]byte{fuzzSheetPart: sheet(header + strings.Repeat(`<row/>`, 1<<20))}, xlsx.Limits{MaxUncompressed: 4 << 20}, "more than the limit of 4 MiB", ""},
		{"styles part", map[string][]byte{fuzzStylesPart: append([]byte(`<styleSheet>`), bytes.Repeat([]byte(" "), xlsx.MaxMetaPart+1)...)}, xlsx.Limits{}, "xl/styles.xml unpacks to", ""},
		{"shared string count", map[string][]byte{fuzzSSTPart: []byte(`<sst>` + strings.Repeat(`<si/>`, xlsx.MaxSSTStrings+1) + `</sst>`)}, xlsx.Limits{}, "more than 1048576 entries", ""},
		{"shared string length", map[string][]byte{fuzzSSTPart: []byte(`<sst><si><t>` + strings.Repeat("w", xlsx.MaxCellChars+1) + `</t></si></sst>`)}, xlsx.Limits{}, "more than 32767 characters", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts := maps.Clone(small)
			maps.Copy(parts, tc.parts)
			data := zipParts(parts)
			var recs []pipeline.Record
			var ps pipeline.Problems
			readXLSXLimited("h.xlsx", bytes.NewReader(data), int64(len(data)), tc.lim, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
			if !ps.HasErrors() || !strings.Contains(fmt.Sprint(ps), tc.want) || !strings.Contains(fmt.Sprint(ps), "oversized") {
				t.Fatalf("problems %v, want an oversized-file error with %q", ps, tc.want)
			}
			if tc.cell != "" && !slices.ContainsFunc(ps, func(p pipeline.Problem) bool { return p.Origin.Cell == tc.cell }) {
				t.Errorf("no problem at %s: %v", tc.cell, ps)
			}
		})
	}
}

// TestHostileGridBounded: a workbook without a flat table is read one
// sheet at a time; a sheet within Limits.MaxGridSheet whose cells are more
// than a grid plan sheet's is refused once it passes grid.MaxSheetCells,
// before they are all held.
func TestHostileGridBounded(t *testing.T) {
	small := xlsxParts(t, smallFlatXLSX(t, nil))
	many := maps.Clone(small)
	many[fuzzSheetPart] = []byte(`<worksheet><sheetData>` + strings.Repeat(`<row>`+strings.Repeat(`<c><v>1</v></c>`, 1000)+`</row>`, grid.MaxSheetCells/1000+1) + `</sheetData></worksheet>`)
	if n := len(many[fuzzSheetPart]); n > xlsx.DefaultMaxGridSheet {
		t.Fatalf("the sheet takes %d bytes, more than the per-sheet bound", n)
	}
	data := zipParts(many)
	var ps pipeline.Problems
	readXLSXLimited("g.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, func(pipeline.Record) {}, &ps)
	if !strings.Contains(fmt.Sprint(ps), fmt.Sprintf("more than %d cells", grid.MaxSheetCells)) || !strings.Contains(fmt.Sprint(ps), "oversized") {
		t.Fatalf("problems %v, want the grid sheet's cell limit", ps)
	}
}

// TestHostileCentralDirectory: an archive whose list of parts is larger
// than any workbook's is refused before zip.NewReader reads it.
func TestHostileCentralDirectory(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	name := strings.Repeat("n", 60000)
	for i := range 80 {
		_, _ = zw.Create(name + strconv.Itoa(i))
	}
	_ = zw.Close()
	data := buf.Bytes()
	var ps pipeline.Problems
	readXLSXLimited("cd.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, func(pipeline.Record) {}, &ps)
	if !strings.Contains(fmt.Sprint(ps), "list of parts takes") {
		t.Fatalf("problems %v", ps)
	}
}

// TestBadCellReferences: a reference past XFD, one that is not a
// reference, one in another row, a repeated or backward one, and a
// repeated row are each an error at that place, never "the next column".
func TestBadCellReferences(t *testing.T) {
	small := xlsxParts(t, smallFlatXLSX(t, nil))
	header := `<row r="1"><c r="A1" t="inlineStr"><is><t>plan_name</t></is></c><c r="B1" t="inlineStr"><is><t>target_type</t></is></c></row>`
	cases := []struct {
		name, rows, want string
		row              int
		cell             string
	}{
		{"past XFD", `<row r="2"><c r="A2"><v>1</v></c><c r="XFE2"><v>5</v></c></row>`, `"XFE2" is not a cell`, 2, "B2"},
		{"not a reference", `<row r="2"><c r="!!"><v>5</v></c></row>`, `"!!" is not a cell`, 2, "A2"},
		{"other row", `<row r="2"><c r="I7"><v>5</v></c></row>`, `"I7" is inside row 2`, 2, "I2"},
		{"duplicate", `<row r="2"><c r="C2"><v>5</v></c><c r="C2"><v>6</v></c></row>`, `"C2" comes after column C`, 2, "C2"},
		{"backward", `<row r="2"><c r="D2"><v>5</v></c><c r="C2"><v>6</v></c></row>`, `"C2" comes after column D`, 2, "C2"},
		{"repeated row", `<row r="2"><c r="A2"><v>5</v></c></row><row r="2"><c r="A2"><v>6</v></c></row>`, `row 2 comes again`, 2, ""},
		{"row zero", `<row r="0"><c><v>5</v></c></row>`, `row number "0"`, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts := maps.Clone(small)
			parts[fuzzSheetPart] = []byte(`<worksheet><sheetData>` + header + tc.rows + `</sheetData></worksheet>`)
			data := zipParts(parts)
			var ps pipeline.Problems
			readXLSXLimited("r.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, func(pipeline.Record) {}, &ps)
			i := slices.IndexFunc(ps, func(p pipeline.Problem) bool {
				return p.Severity == pipeline.Error && strings.Contains(p.Message, tc.want)
			})
			if i < 0 {
				t.Fatalf("problems %v, want an error with %q", ps, tc.want)
			}
			if p := ps[i]; p.Origin.Row != tc.row || p.Origin.Cell != tc.cell || p.Origin.Sheet == "" {
				t.Errorf("error at %+v, want row %d cell %q", p.Origin, tc.row, tc.cell)
			}
		})
	}
	// Without references the cells follow each other, as Excel allows.
	parts := maps.Clone(small)
	parts[fuzzSheetPart] = []byte(`<worksheet><sheetData>` + header + `<row><c t="inlineStr"><is><t>P</t></is></c><c t="inlineStr"><is><t>all_employees</t></is></c></row></sheetData></worksheet>`)
	data := zipParts(parts)
	var recs []pipeline.Record
	var ps pipeline.Problems
	readXLSXLimited("r.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
	if len(recs) != 1 || recs[0].Cells["target_type"].Text != "all_employees" {
		t.Fatalf("records %+v problems %v", recs, ps)
	}
}

// TestUnreadableSharedStringSaysWhy: a cell whose shared string cannot be
// read says what is wrong, never an empty reason.
func TestUnreadableSharedStringSaysWhy(t *testing.T) {
	small := xlsxParts(t, smallFlatXLSX(t, nil))
	header := `<row r="1"><c r="A1" t="inlineStr"><is><t>plan_name</t></is></c><c r="B1" t="inlineStr"><is><t>target_type</t></is></c><c r="C1" t="inlineStr"><is><t>year_number</t></is></c></row>`
	for _, tc := range []struct{ name, sst, v, want string }{
		{"index past the end", `<sst><si><t>all_employees</t></si></sst>`, "7", "has only 1 entries"},
		{"not a number", `<sst><si><t>all_employees</t></si></sst>`, "x", `refers to shared string "x"`},
		{"table damaged", `<sst><si><t>all_employees</t></si><si><t>oops</sst>`, "1", "shared string table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := maps.Clone(small)
			parts[fuzzSSTPart] = []byte(tc.sst)
			parts[fuzzSheetPart] = []byte(`<worksheet><sheetData>` + header + `<row r="2"><c r="A2" t="s"><v>` + tc.v + `</v></c><c r="B2" t="s"><v>0</v></c><c r="C2"><v>1</v></c></row></sheetData></worksheet>`)
			data := zipParts(parts)
			var recs []pipeline.Record
			var ps pipeline.Problems
			readXLSXLimited("s.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
			_, aps := assembleRecords(recs, nil)
			ps = append(ps, aps...)
			i := slices.IndexFunc(ps, func(p pipeline.Problem) bool { return p.Origin.Cell == "A2" })
			if i < 0 || !strings.Contains(ps[i].Message, tc.want) {
				t.Fatalf("problems %v, want one at A2 with %q", ps, tc.want)
			}
			if tc.name == "table damaged" && !slices.ContainsFunc(ps, func(p pipeline.Problem) bool {
				return p.Origin.Sheet == "" && p.Severity == pipeline.Error && strings.Contains(p.Message, "the workbook is damaged")
			}) {
				t.Errorf("no file error for the damaged table: %v", ps)
			}
		})
	}
}

// TestCSVLineAndRecordBounds: an endless line (as /dev/zero would give) or
// an unterminated quote stops the file with an error, memory bounded.
func TestCSVLineAndRecordBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    io.Reader
		want string
		line int
	}{
		{"endless line", io.MultiReader(strings.NewReader("plan_name,target_type\nA,all_employees\n"), io.LimitReader(hostileZeros{}, 1<<30)), "the line is longer than 1 MiB", 3},
		{"too many fields", strings.NewReader("plan_name,target_type\n" + strings.Repeat(",", xlsx.MaxRowCells) + "\n"), "the line has 16385 fields", 2},
		{"unterminated quote", io.MultiReader(strings.NewReader("plan_name,target_type\n\"A,"), io.LimitReader(hostileRepeat("abc\n"), 1<<30)), "the record starting on this line is longer than 4 MiB", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps pipeline.Problems
			table.ReadCSV("z.csv", tc.r, pipeline.DefaultCatalog(), nil, func(pipeline.Record) {}, &ps)
			i := slices.IndexFunc(ps, func(p pipeline.Problem) bool { return strings.Contains(p.Message, tc.want) })
			if i < 0 || ps[i].Severity != pipeline.Error || ps[i].Origin.Row != tc.line {
				t.Fatalf("problems %v, want an error on line %d with %q", ps, tc.line, tc.want)
			}
		})
	}
}

type hostileZeros struct{}

func (hostileZeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type hostileRepeat string

func (s hostileRepeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], s)
	}
	return n, nil
}

// TestReaderPanicIsInternal: a reader that panics gives ErrInternal, not
// a problem of the file (which would exit 2).
func TestReaderPanicIsInternal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.csv")
	if err := os.WriteFile(path, []byte("plan_name,target_type\nA,all_employees\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readPanicHook = func(string) { panic("injected") }
	defer func() { readPanicHook = nil }()
	batch, err := ReadFiles([]string{path}, ReadOptions{})
	var ie *InternalError
	if !errors.Is(err, ErrInternal) || !errors.As(err, &ie) || ie.File != path || batch != nil {
		t.Fatalf("err %v batch %v, want an internal error", err, batch)
	}
	if !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "injected") || len(ie.Stack) == 0 {
		t.Errorf("message %q", err)
	}
}

// TestGridBadCellReference: a workbook read as grid sheets (by excelize)
// is scanned by the bounded reader first: a malformed reference anywhere
// is an error at the cell, not a value moved to another cell.
func TestGridBadCellReference(t *testing.T) {
	small := xlsxParts(t, smallFlatXLSX(t, nil))
	rows := strings.Repeat(`<row><c t="inlineStr"><is><t>x</t></is></c></row>`, 30)
	small[fuzzSheetPart] = []byte(`<worksheet><sheetData>` + rows + `<row r="31"><c r="A31"><v>1</v></c><c r="I7"><v>5</v></c></row></sheetData></worksheet>`)
	data := zipParts(small)
	var ps pipeline.Problems
	readXLSXLimited("g.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{}, pipeline.DefaultCatalog(), nil, func(pipeline.Record) {}, &ps)
	i := slices.IndexFunc(ps, func(p pipeline.Problem) bool { return strings.Contains(p.Message, `"I7" is inside row 31`) })
	if i < 0 || ps[i].Origin.Cell != "I31" || ps[i].Severity != pipeline.Error {
		t.Fatalf("problems %v", ps)
	}
}
