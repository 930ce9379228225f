package grid

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// FuzzReadGridSheet feeds workbook bytes to the grid reader: whatever the
// bytes, it must not panic, and every problem must say where it is.
func FuzzReadGridSheet(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "grid", "*.xlsx"))
	statutory, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "acceptance", "op_eea*.xlsx"))
	paths = append(paths, statutory...)
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, probs := readGridBytes(data)
		checkGridOutput(t, recs, probs)
	})
}

// FuzzGridText builds a sheet from tab-separated lines and reads it as a
// grid: labels, headers and level rows in any arrangement must never
// panic, and every record must carry a target type and cite its cells.
func FuzzGridText(f *testing.F) {
	f.Add("Plan ID\t12\nYear 1 — 2026/27 — All employees\nLevel\tAfrican\t\tWhite\nx\tMale\tFemale\tMale\nTop management\t1\t2\t3\nJunior\t4\t\t5\n")
	f.Add("Year 2 all\nlvl\tafrican male\tindian_female\ntop_managers\t1\t2\n\nsenior_managers\t3\t4\n")
	f.Add("2026/2027 disabled\n\tAfrikan\n\tMael\nTop managment\t-1\n")
	f.Add("African\tWhite\nMale\tFemale\n1\t2\n")
	f.Add("Year 1 all employees\tYear 2 all employees\nAfrican\tAfrican\nMale\tMale\n")
	f.Add("Year 1 all employees, including people with disabilities\nLevel\tMale\t\tFemale\t\tForeign Nationals\t\tTotal\n\tA\tW\tA\tW\tMale\tFemale\nTop management\t1\t2\t3\t4\t5\t6\t21\t9\nSkilled technical/junior management/supervisors\t1\n")
	f.Add("Year 1 all employees and employees with disabilities\nLevel\tAM\tAF\tW male\tSum\nTop\t1\t2\t3\t4\n")
	f.Add("Year 1 disabled\nLevel\tA\t\tFN\nx\tM\tF\tM\tF\nGRAND TOTAL\t1\t\t2\t3\t4\n")
	f.Add("Start date\t2026-09-01\nEnd date\t2028-08-31\n4.1 Workforce profile\nAll employees\nLevel\tMA\tFW\tFNM\n1. Top Management/ Executives\t1\t2\t3\n4.2 Numerical goals\nPeople with disabilities only\nLevel\tMA\tFNF\nTop management (1)\t4\t5\nYear 2 (2027/28): people with disabilities only\nLevel\tMA\tFNF\nTop management\t4\t6\n")
	f.Add("Year 1 all\nOccupational level\tAfrican\t\tIndian/Asian\n\tMale\tFemale\tMale\nOccupational level\nF\t1\t2\t3\nClerks\t1\t1\t1\n")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4000 || strings.Count(text, "\n") > 60 {
			return
		}
		wb := excelize.NewFile()
		defer wb.Close()
		for r, line := range strings.Split(text, "\n") {
			for c, v := range strings.Split(line, "\t") {
				if c >= 40 || v == "" {
					continue
				}
				ref := cellName(c+1, r+1)
				if err := wb.SetCellStr("Sheet1", ref, v); err != nil {
					return // text excelize refuses (too long, invalid XML)
				}
			}
		}
		buf, err := wb.WriteToBuffer()
		if err != nil {
			return
		}
		recs, probs := readGridBytes(buf.Bytes())
		checkGridOutput(t, recs, probs)
	})
}

func checkGridOutput(t *testing.T, recs []pipeline.Record, probs pipeline.Problems) {
	t.Helper()
	for _, rec := range recs {
		tt, ok := rec.Cells["target_type"]
		if !ok || (tt.Text != pipeline.TargetAll && tt.Text != pipeline.TargetDisabled) {
			t.Fatalf("record without a valid target type: %+v", rec.Cells["target_type"])
		}
		for name, c := range rec.Cells {
			if c.Origin.Sheet == "" || c.Origin.Sheet != rec.Origin.Sheet || c.Origin.WithCell().Cell == "" {
				t.Fatalf("cell %s has no place: %+v", name, c.Origin)
			}
		}
	}
	for _, p := range probs {
		if p.Origin.File == "" || p.Message == "" {
			t.Fatalf("problem without a place or message: %+v", p)
		}
	}
}

// readGridBytes reads a workbook's grid sheets as ReadFiles does: the
// streaming reader, within the default limits.
func readGridBytes(data []byte) ([]pipeline.Record, pipeline.Problems) {
	var ps pipeline.Problems
	book, err := xlsx.Open(bytes.NewReader(data), int64(len(data)), xlsx.Limits{})
	if err != nil {
		return nil, nil
	}
	var recs []pipeline.Record
	ReadWorkbook("fuzz.xlsx", xlsx.Limits{}, book, pipeline.DefaultCatalog(), nil, func(r pipeline.Record) { recs = append(recs, r) }, &ps)
	return recs, ps
}

// FuzzGridTitle classifies arbitrary grid titles: never a panic; a title
// read as disabled_employees mentions disabilities; an unclear one names no
// target type.
func FuzzGridTitle(f *testing.F) {
	for _, s := range []string{"Year 1 — 2026/27 — All employees, including people with disabilities",
		"Employees with disabilities", "All employees / employees with disabilities", "Disabled", "all employees incl. PWD",
		"Employees excluding disabled", "year 2 all", "Employees with disabilities (all sites)",
		"Year 1 (01/09/2026 – 31/08/2027): all employees", "FY2028 All employees",
		"Numerical goals: all employees, including people with disabilities", "Workforce profile (baseline, EEA2 2025/26): people with disabilities only",
		"4.3 Numerical targets Year 2 (2027/28) all employees", "EEA4 Remuneration of all employees 2026/27"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tt, unclear, ok := templates.TitleTargetType(text)
		switch {
		case !ok && (tt != "" || unclear):
			t.Fatalf("%q: not a title, yet %q, unclear %v", text, tt, unclear)
		case unclear && tt != "":
			t.Fatalf("%q: unclear, yet %q", text, tt)
		case ok && !unclear && tt != pipeline.TargetAll && tt != pipeline.TargetDisabled:
			t.Fatalf("%q: target type %q", text, tt)
		case tt == pipeline.TargetDisabled && !regexp.MustCompile(`disab|\bpwds?\b`).MatchString(templates.Normalize(text)):
			t.Fatalf("%q: read as disabled without naming disabilities", text)
		}
		if g, ok := parseGridLabel(text); ok && g.rangeErr == "" && g.fy == "" && g.yearNumber == 0 && (!g.sectionNamed || g.section == sectionTargets) {
			t.Fatalf("%q: a label with neither a year nor a financial year, nor EEA13's goals or profile", text)
		}
	})
}

// cellName is the reference of the cell at column c, row r.
func cellName(c, r int) string {
	s, _ := excelize.CoordinatesToCellName(c, r)
	return s
}
