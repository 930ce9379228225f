package readback

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
)

// ModelPlan is an InputPlan without origins, for comparing models.
type ModelPlan struct {
	PlanID      int64
	Company     pipeline.CompanyIDs
	Name        string
	StartDate   pipeline.Date
	EndDate     pipeline.Date
	Sector      string
	ScorecardID string
	Targets     []ModelTarget
}

type ModelTarget struct {
	YearNumber    int
	FinancialYear pipeline.FinancialYear
	TargetType    string
	Counters      map[string]int64
}

// Model strips origins and orders targets, so two reads compare equal.
func Model(plans []*pipeline.InputPlan) []ModelPlan {
	out := make([]ModelPlan, 0, len(plans))
	for _, p := range plans {
		mp := ModelPlan{PlanID: p.PlanID, Company: p.Company, Name: p.Name, StartDate: p.StartDate,
			EndDate: p.EndDate, Sector: p.Sector, ScorecardID: p.ScorecardID}
		for _, t := range p.Targets {
			c := t.Counters.Map()
			if c == nil {
				c = map[string]int64{}
			}
			mp.Targets = append(mp.Targets, ModelTarget{t.YearNumber, t.FinancialYear, t.TargetType, c})
		}
		sort.Slice(mp.Targets, func(i, j int) bool {
			a, b := mp.Targets[i], mp.Targets[j]
			if a.YearNumber != b.YearNumber {
				return a.YearNumber < b.YearNumber
			}
			return a.TargetType < b.TargetType
		})
		out = append(out, mp)
	}
	return out
}

// GenPlans generates a valid model: plans Assemble accepts without errors,
// with unique keys, every target within the plan's years, and at least one
// counter set per target.
func GenPlans(t *rapid.T, cat *pipeline.Catalog) []*pipeline.InputPlan {
	n := rapid.IntRange(1, 3).Draw(t, "plans")
	var plans []*pipeline.InputPlan
	digits := rapid.StringOfN(rapid.RuneFrom([]rune("0123456789")), 10, 10, -1)
	for i := 0; i < n; i++ {
		p := &pipeline.InputPlan{}
		existing := rapid.Bool().Draw(t, "existing")
		if existing {
			p.PlanID = int64(1000*(i+1) + rapid.IntRange(1, 999).Draw(t, "id"))
		}
		if rapid.Bool().Draw(t, "vat") || !existing {
			p.Company.VAT = "0" + digits.Draw(t, "vatno")[1:]
		}
		if rapid.Bool().Draw(t, "reg") {
			p.Company.Registration = fmt.Sprintf("%04d/%06d/07", rapid.IntRange(1950, 2025).Draw(t, "regy"), rapid.IntRange(0, 999999).Draw(t, "regn"))
		}
		if rapid.Bool().Draw(t, "idno") {
			p.Company.IDNumber = "00" + digits.Draw(t, "idn") + "7"
		}
		words := rapid.SliceOfN(rapid.SampledFrom([]string{"Acme", "Blue", "Crane", "EE", "plan", "2026", "Foods", "(Pty)", "Ltd", "&", "O'Brien", "Ümlaut", "ñ", "/", "x"}), 1, 6)
		p.Name = fmt.Sprintf("P%d %s", i+1, strings.Join(words.Draw(t, "name"), " "))
		hasDates := !existing || rapid.Bool().Draw(t, "dates")
		years := 0
		if hasDates {
			start := pipeline.EarliestStart.Time().AddDate(0, 0, rapid.IntRange(0, 1000).Draw(t, "start"))
			p.StartDate = pipeline.DateOf(start)
			fy := pipeline.FinancialYearOf(p.StartDate)
			last := min(fy+pipeline.FinancialYear(rapid.IntRange(0, 4).Draw(t, "span")), pipeline.FinancialYearOf(pipeline.LatestEnd))
			p.EndDate = last.End()
			if rapid.Bool().Draw(t, "midyear") && last.End().Time().AddDate(0, -3, 0).After(start) {
				p.EndDate = pipeline.DateOf(last.End().Time().AddDate(0, -3, 0))
			}
			years = len(pipeline.PlanYears(p.StartDate, p.EndDate))
		} else {
			years = rapid.IntRange(1, 5).Draw(t, "years")
		}
		if rapid.Bool().Draw(t, "sector") {
			p.Sector = rapid.SampledFrom(pipeline.Sectors).Draw(t, "sectorv")
		}
		if rapid.Bool().Draw(t, "scorecard") {
			p.ScorecardID = "scorecard_" + strings.ToLower(digits.Draw(t, "sc"))
		}
		for y := 1; y <= years; y++ {
			for _, tt := range pipeline.TargetTypes {
				if !rapid.Bool().Draw(t, "hasTarget") && !(y == 1 && tt == pipeline.TargetAll) {
					continue
				}
				tg := &pipeline.InputTarget{YearNumber: y, TargetType: tt, Counters: pipeline.CountersOf(map[string]int64{})}
				if !p.StartDate.IsZero() {
					tg.FinancialYear = pipeline.FinancialYearOf(p.StartDate) + pipeline.FinancialYear(y-1)
				}
				all := rapid.Bool().Draw(t, "allCounters")
				for _, name := range cat.Names() {
					if all || rapid.IntRange(0, 3).Draw(t, "set") == 0 {
						tg.Counters.Put(name, rapid.Int64Range(0, 100000).Draw(t, "v"))
					}
				}
				if tg.Counters.Count() == 0 {
					tg.Counters.Put(cat.Names()[0], 7)
				}
				p.Targets = append(p.Targets, tg)
			}
		}
		plans = append(plans, p)
	}
	return plans
}

// TB is what the helpers need of testing.TB and *rapid.T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// ReadGridWorkbook reads the grid sheets of the workbook at path through
// the streaming grid reader formats.ReadFiles uses.
func ReadGridWorkbook(t TB, path string, cat *pipeline.Catalog) ([]pipeline.Record, pipeline.Problems) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return ReadGridBytes(path, data, cat)
}

// ReadGridBytes reads the grid sheets of a workbook's bytes through the
// streaming grid reader (grid.ReadWorkbook), as formats.ReadFiles does for a
// workbook without a flat table.
func ReadGridBytes(file string, data []byte, cat *pipeline.Catalog) ([]pipeline.Record, pipeline.Problems) {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	var ps pipeline.Problems
	book, err := xlsx.Open(bytes.NewReader(data), int64(len(data)), xlsx.Limits{})
	if err != nil {
		ps.Errorf(pipeline.Origin{File: file}, "", "%v", err)
		return nil, ps
	}
	var recs []pipeline.Record
	grid.ReadWorkbook(file, xlsx.Limits{}, book, cat, nil, func(r pipeline.Record) { recs = append(recs, r) }, &ps)
	return recs, ps
}

// ReadGridSheet reads the sheet of wb, saved, through the streaming grid
// reader: its records and problems.
func ReadGridSheet(t TB, wb *excelize.File, file, sheet string) ([]pipeline.Record, pipeline.Problems) {
	t.Helper()
	buf, err := wb.WriteToBuffer()
	if err != nil {
		t.Fatalf("save %s: %v", file, err)
	}
	recs, ps := ReadGridBytes(file, buf.Bytes(), nil)
	var out []pipeline.Record
	for _, r := range recs {
		if r.Origin.Sheet == sheet {
			out = append(out, r)
		}
	}
	var outPs pipeline.Problems
	for _, p := range ps {
		if p.Origin.Sheet == sheet || p.Origin.Sheet == "" {
			outPs = append(outPs, p)
		}
	}
	return out, outPs
}

// GridSheetsOf returns the sheets of wb, saved, that the grid reader
// reads plans from.
func GridSheetsOf(t TB, wb *excelize.File) []string {
	t.Helper()
	buf, err := wb.WriteToBuffer()
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	recs, _ := ReadGridBytes("t.xlsx", buf.Bytes(), nil)
	var out []string
	for _, r := range recs {
		if !slices.Contains(out, r.Origin.Sheet) {
			out = append(out, r.Origin.Sheet)
		}
	}
	return out
}

// ReadGridModel reads a grid workbook and assembles it; it fails the test
// on any error.
func ReadGridModel(t TB, path string, cat *pipeline.Catalog) []*pipeline.InputPlan {
	t.Helper()
	recs, probs := ReadGridWorkbook(t, path, cat)
	plans, more := Assemble(recs, cat)
	probs = append(probs, more...)
	if probs.HasErrors() {
		t.Fatalf("%s: errors reading back:\n%s", filepath.Base(path), ProblemsText(probs))
	}
	return plans
}

// ProblemsText is the problems, one a line.
func ProblemsText(ps pipeline.Problems) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Assemble groups records into plans as formats.ReadFiles does (pipeline's
// Assembler).
func Assemble(recs []pipeline.Record, cat *pipeline.Catalog) ([]*pipeline.InputPlan, pipeline.Problems) {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	a := assemble.NewAssembler(cat)
	for _, r := range recs {
		a.Add(r)
	}
	return a.Finish()
}

// CheckRead is what every read must satisfy whatever the input: every
// problem has a file and a message, and every record's cells are typed.
func CheckRead(t testing.TB, recs []pipeline.Record, ps pipeline.Problems) {
	t.Helper()
	for _, p := range ps {
		if p.Origin.File == "" || p.Message == "" || (p.Severity != pipeline.Error && p.Severity != pipeline.Warning) {
			t.Fatalf("bad problem %+v", p)
		}
	}
	for _, r := range recs {
		if r.Origin.Row <= 0 {
			t.Fatalf("record without a row: %+v", r.Origin)
		}
		for name, c := range r.Cells {
			if c.Origin.Row <= 0 || c.Origin.Column <= 0 {
				t.Fatalf("cell %s without a place: %+v", name, c.Origin)
			}
		}
	}
	// Whatever was read must Assemble without panicking.
	Assemble(recs, nil)
}

// Collect returns an emit function that keeps copies of the records
// (the readers reuse a record's map for the next one).
func Collect(recs *[]pipeline.Record) func(pipeline.Record) {
	return func(r pipeline.Record) {
		r.Cells = maps.Clone(r.Cells)
		// A reader may give counter cells in a reused slice: the tests
		// see every cell of the record by its name.
		for _, c := range r.Counters {
			if r.Cells == nil {
				r.Cells = map[string]pipeline.Cell{}
			}
			r.Cells[c.Name] = c.Cell
		}
		r.Counters = nil
		// ... and the plan and year cells it gives in a reused RowCells.
		if r.Fixed != nil {
			for i, has := range r.Fixed.Has {
				if has {
					if r.Cells == nil {
						r.Cells = map[string]pipeline.Cell{}
					}
					r.Cells[pipeline.RowColumns[i]] = r.Fixed.Cells[i]
				}
			}
			r.Fixed = nil
		}
		*recs = append(*recs, r)
	}
}
