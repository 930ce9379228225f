package formats

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
)

// modelPlan is an InputPlan without origins, for comparing models.
type modelPlan struct {
	PlanID      int64
	Company     pipeline.CompanyIDs
	Name        string
	StartDate   pipeline.Date
	EndDate     pipeline.Date
	Sector      string
	ScorecardID string
	Targets     []modelTarget
}

type modelTarget struct {
	YearNumber    int
	FinancialYear pipeline.FinancialYear
	TargetType    string
	Counters      map[string]int64
}

// model strips origins and orders targets, so two reads compare equal.
func model(plans []*pipeline.InputPlan) []modelPlan {
	out := make([]modelPlan, 0, len(plans))
	for _, p := range plans {
		mp := modelPlan{PlanID: p.PlanID, Company: p.Company, Name: p.Name, StartDate: p.StartDate,
			EndDate: p.EndDate, Sector: p.Sector, ScorecardID: p.ScorecardID}
		for _, t := range p.Targets {
			c := t.Counters.Map()
			if c == nil {
				c = map[string]int64{}
			}
			mp.Targets = append(mp.Targets, modelTarget{t.YearNumber, t.FinancialYear, t.TargetType, c})
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

// genPlans generates a valid model: plans Assemble accepts without errors,
// with unique keys, every target within the plan's years, and at least one
// counter set per target.
func genPlans(t *rapid.T, cat *pipeline.Catalog) []*pipeline.InputPlan {
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

// tb is what the helpers need of testing.TB and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// readGridWorkbook reads the grid sheets of the workbook at path through
// the streaming grid reader ReadFiles uses.
func readGridWorkbook(t tb, path string, cat *pipeline.Catalog) ([]pipeline.Record, pipeline.Problems) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return readGridBytes(path, data, cat)
}

// readGridBytes reads the grid sheets of a workbook's bytes through the
// streaming grid reader (grid.ReadWorkbook), as ReadFiles does for a
// workbook without a flat table.
func readGridBytes(file string, data []byte, cat *pipeline.Catalog) ([]pipeline.Record, pipeline.Problems) {
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

// readGridSheet reads the sheet of wb, saved, through the streaming grid
// reader: its records and problems.
func readGridSheet(t tb, wb *excelize.File, file, sheet string) ([]pipeline.Record, pipeline.Problems) {
	t.Helper()
	buf, err := wb.WriteToBuffer()
	if err != nil {
		t.Fatalf("save %s: %v", file, err)
	}
	recs, ps := readGridBytes(file, buf.Bytes(), nil)
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

// gridSheetsOf returns the sheets of wb, saved, that the grid reader
// reads plans from.
func gridSheetsOf(t tb, wb *excelize.File) []string {
	t.Helper()
	buf, err := wb.WriteToBuffer()
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	recs, _ := readGridBytes("t.xlsx", buf.Bytes(), nil)
	var out []string
	for _, r := range recs {
		if !slices.Contains(out, r.Origin.Sheet) {
			out = append(out, r.Origin.Sheet)
		}
	}
	return out
}

// readGridModel reads a grid workbook and assembles it; it fails the test
// on any error.
func readGridModel(t tb, path string, cat *pipeline.Catalog) []*pipeline.InputPlan {
	t.Helper()
	recs, probs := readGridWorkbook(t, path, cat)
	plans, more := assembleRecords(recs, cat)
	probs = append(probs, more...)
	if probs.HasErrors() {
		t.Fatalf("%s: errors reading back:\n%s", filepath.Base(path), problemsText(probs))
	}
	return plans
}

func problemsText(ps pipeline.Problems) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// date is a shorthand for a date literal.
func date(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// assembleRecords groups records into plans as ReadFiles does (pipeline's
// Assembler).
func assembleRecords(recs []pipeline.Record, cat *pipeline.Catalog) ([]*pipeline.InputPlan, pipeline.Problems) {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	a := assemble.NewAssembler(cat)
	for _, r := range recs {
		a.Add(r)
	}
	return a.Finish()
}

var _ = time.UTC
