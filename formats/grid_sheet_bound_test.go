package formats

import (
	"archive/zip"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// gridBoundExport writes the grid export (charts and the Sector targets
// sheet, as the command writes it) of n plans, and returns its path, the
// sheets in workbook order with the sizes their parts unpack to, and the
// whole workbook's.
func gridBoundExport(t *testing.T, n int) (path string, order []string, sheets map[string]int64, total int64) {
	t.Helper()
	plans := benchExportPlans(n)
	inputs := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		inputs[i] = p.Plan
	}
	report := sector.CheckSector(inputs, nil, sector.DefaultSectorTargets())
	path = filepath.Join(t.TempDir(), "plans.xlsx")
	opts := export.Options{GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Sector: &export.Sector{Plans: report.Plans, Source: report.TargetsSource}}
	if err := writeExportXLSX(path, plans, opts); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		total += int64(f.UncompressedSize64)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sheets = map[string]int64{}
	for _, info := range book.Sheets {
		sheets[info.Name] = int64(book.Files[info.Path].UncompressedSize64)
		order = append(order, info.Name)
	}
	return path, order, sheets, total
}

// TestGridSheetBound: a grid workbook is bounded per sheet read as a grid
// plan sheet (Limits.MaxGridSheet) and as a whole by Limits.MaxUncompressed
// (--max-uncompressed), never by a grid limit on the whole workbook. With
// the per-sheet bound at the largest plan sheet, an export that unpacks to
// dozens of times that reads whole, its Sector targets sheet (larger than
// the bound, no plan sheet) passed over; a byte less refuses that plan
// sheet, named (an error: nothing of the file is applied); the workbook's limit a byte under its size refuses it.
func TestGridSheetBound(t *testing.T) {
	const n = 40
	path, order, sheets, total := gridBoundExport(t, n)
	var largest string // the first of the largest plan sheets
	for _, name := range order {
		size := sheets[name]
		if strings.HasPrefix(name, "Bench plan") && (largest == "" || size > sheets[largest]) {
			largest = name
		}
	}
	bound := sheets[largest]
	if total < 20*bound || sheets[reports.SectorSheetName] <= bound {
		t.Fatalf("the workbook (%d bytes) and its Sector targets sheet (%d) must be well over the largest plan sheet (%d)", total, sheets[reports.SectorSheetName], bound)
	}
	read := func(lim xlsx.Limits) *pipeline.Batch {
		t.Helper()
		batch, err := ReadFiles([]string{path}, ReadOptions{Limits: lim, Bound: &pipeline.ProblemBound{Keep: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return batch
	}

	batch := read(xlsx.Limits{MaxGridSheet: bound})
	if len(batch.Plans) != n || batch.Count(pipeline.Error) != 0 {
		t.Fatalf("per-sheet bound %d: %d plans of %d, problems %v", bound, len(batch.Plans), n, firstProblems(batch.Problems))
	}

	batch = read(xlsx.Limits{MaxGridSheet: bound - 1})
	msg := fmt.Sprintf("unpacks to %s, more than the %s a grid plan sheet may", xlsx.SizeText(bound), xlsx.SizeText(bound-1))
	if !slicesContainsProblem(batch.Problems, largest, msg) {
		t.Fatalf("per-sheet bound %d: %d plans, problems %v; want sheet %q refused with %q", bound-1, len(batch.Plans), firstProblems(batch.Problems), largest, msg)
	}

	batch = read(xlsx.Limits{MaxUncompressed: total - 1, MaxGridSheet: bound})
	msg = fmt.Sprintf("more than the limit of %s (--max-uncompressed)", xlsx.SizeText(total-1))
	if len(batch.Plans) != 0 || !slicesContainsProblem(batch.Problems, "", msg) {
		t.Fatalf("workbook limit %d: %d plans, problems %v; want %q", total-1, len(batch.Plans), firstProblems(batch.Problems), msg)
	}
}

// slicesContainsProblem reports whether an error on sheet says msg.
func slicesContainsProblem(ps pipeline.Problems, sheet, msg string) bool {
	for _, p := range ps {
		if p.Severity == pipeline.Error && p.Origin.Sheet == sheet && strings.Contains(p.Message, msg) && strings.Contains(p.Message, "oversized") {
			return true
		}
	}
	return false
}

// TestGridSheetLargeNoPlan: a visible sheet over the per-sheet bound that
// is no plan sheet (no grid label, no plan details: a large table of
// numbers and text) is scanned keeping nothing and passed over, so the
// grid sheets beside it read; one with a grid label below its first
// rows is refused at that cell.
func TestGridSheetLargeNoPlan(t *testing.T) {
	path, _, _, _ := gridBoundExport(t, 2)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := xlsxParts(t, data)
	// table is a sheet of 3,000 rows of text and numbers, with a grid
	// label at D2500 and a header of races below it when grid is set.
	table := func(grid bool) string {
		var b strings.Builder
		b.WriteString(`<worksheet><sheetData>`)
		for r := 1; r <= 3000; r++ {
			fmt.Fprintf(&b, `<row r="%d"><c r="A%d" t="inlineStr"><is><t>Row %d of a large table</t></is></c><c r="B%d"><v>%d</v></c>`, r, r, r, r, r)
			switch {
			case grid && r == 2500:
				b.WriteString(`<c r="D2500" t="inlineStr"><is><t>Year 2: Employees with disabilities</t></is></c>`)
			case grid && r == 2502:
				b.WriteString(`<c r="E2502" t="inlineStr"><is><t>Indian</t></is></c>`)
			}
			b.WriteString(`</row>`)
		}
		return b.String() + `</sheetData></worksheet>`
	}
	plain := table(false)
	const bound = 64 << 10
	if len(plain) <= bound {
		t.Fatalf("the table takes %d bytes, want more than %d", len(plain), bound)
	}
	sheetPart := "xl/worksheets/sheet1.xml" // the Overview
	for _, tc := range []struct {
		name, sheet, cell string
	}{
		{"no plan sheet", plain, ""},
		{"a grid at row 2,500", table(true), "D2500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := maps.Clone(parts)
			p[sheetPart] = []byte(tc.sheet)
			data := zipParts(p)
			var recs []pipeline.Record
			var ps pipeline.Problems
			readXLSXLimited("g.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{MaxGridSheet: bound}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
			if tc.cell == "" {
				if ps.HasErrors() || len(recs) == 0 {
					t.Fatalf("%d records, problems %v", len(recs), ps)
				}
				return
			}
			if len(recs) != 0 || !slicesContainsProblem(ps, "Overview", "a grid plan sheet may") || ps[0].Origin.Cell != tc.cell {
				t.Fatalf("%d records, problems %v; want the Overview refused at %s", len(recs), ps, tc.cell)
			}
		})
	}
}

// TestGridSheetLargeNoPlanScanRows: a sheet over the per-sheet bound with
// no sign of a plan in the first grid.MaxScanRows rows is not unpacked past
// them (nothing reads it further): damage below those rows leaves it
// passed over and the plan sheets read; damage within them is reported.
func TestGridSheetLargeNoPlanScanRows(t *testing.T) {
	path, _, _, _ := gridBoundExport(t, 2)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := xlsxParts(t, data)
	// table has grid.MaxScanRows+100 rows of text, with row damaged
	// repeating the row before it.
	table := func(damaged int) string {
		var b strings.Builder
		b.WriteString(`<worksheet><sheetData>`)
		for r := 1; r <= grid.MaxScanRows+100; r++ {
			n := r
			if r == damaged {
				n = r - 1
			}
			fmt.Fprintf(&b, `<row r="%d"><c r="A%d" t="inlineStr"><is><t>Row %d of a large table</t></is></c></row>`, n, n, r)
		}
		return b.String() + `</sheetData></worksheet>`
	}
	const bound = 64 << 10
	for _, tc := range []struct {
		name    string
		damaged int
		refused bool
	}{
		{"damaged below the rows read", grid.MaxScanRows + 50, false},
		{"damaged within the rows read", grid.MaxScanRows - 50, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := maps.Clone(parts)
			p["xl/worksheets/sheet1.xml"] = []byte(table(tc.damaged)) // the Overview
			data := zipParts(p)
			var recs []pipeline.Record
			var ps pipeline.Problems
			readXLSXLimited("g.xlsx", bytes.NewReader(data), int64(len(data)), xlsx.Limits{MaxGridSheet: bound}, pipeline.DefaultCatalog(), nil, collectRecords(&recs), &ps)
			if !tc.refused {
				if ps.HasErrors() || len(recs) == 0 {
					t.Fatalf("%d records, problems %v", len(recs), ps)
				}
				return
			}
			if len(recs) != 0 || !ps.HasErrors() || !strings.Contains(ps[0].Message, "comes again") || ps[0].Origin.Sheet != "Overview" {
				t.Fatalf("%d records, problems %v; want the Overview's damage at row %d reported", len(recs), ps, tc.damaged)
			}
		})
	}
}
