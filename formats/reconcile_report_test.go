package formats

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
)

// rrUpdate reports whether -update was given (the flag is shared by the
// package's golden tests).
func rrUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// rrReconciliation is a reconciliation of the CSV source below: one plan
// differing in two counters and a field, one missing on the server, one
// only on the server.
func rrReconciliation(src string) *diff.Reconciliation {
	o := func(line, col int) pipeline.Origin { return pipeline.Origin{File: src, Row: line, Column: col} }
	rec := &diff.Reconciliation{
		Schema: diff.ReconcileSchema, GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Files: []string{src}, Complete: true,
		Plans: []diff.ReconciledPlan{
			{Presence: diff.PresencePresent, Account: "acme", CompanyID: "8ovHrj", PlanID: 17, PlanName: "Acme 2026",
				StartDate: "2026-09-01", EndDate: "2030-08-31", Origin: o(2, 0),
				Fields: []diff.FieldDifference{{Field: "sector", Workbook: "Manufacturing", Server: "Construction"}},
				Targets: []diff.TargetDifference{{YearNumber: 1, FinancialYear: "2026/27", TargetType: "all_employees", MilestoneID: 171, TargetID: 1711,
					Counters: []diff.CounterDifference{
						{Counter: "number_of_african_male_top_managers", Workbook: 5, Server: 7, Location: diff.LocationOf(o(2, 5)), Origin: o(2, 5)},
						{Counter: "number_of_african_female_top_managers", Workbook: 0, Server: 1, Location: diff.LocationOf(o(2, 6)), Origin: o(2, 6)},
					}}}},
			{Presence: diff.PresencePresent, InSync: true, Account: "acme", PlanID: 18, PlanName: "Acme 2027", Origin: o(3, 0),
				Fields: []diff.FieldDifference{}, Targets: []diff.TargetDifference{}},
			{Presence: diff.PresenceMissing, Account: "acme", PlanName: "New", StartDate: "2027-09-01", Origin: o(5, 0),
				Reason: "the service holds no plan \"New\" starting 2027-09-01", Fields: []diff.FieldDifference{}, Targets: []diff.TargetDifference{}},
			{Presence: diff.PresenceOnlyOnServer, Account: "acme", CompanyID: "8ovHrj", PlanID: 21, PlanName: "Old", StartDate: "2025-09-01",
				Reason: "the service holds this plan for the company but the workbook does not describe it"},
		},
	}
	for i := range rec.Plans {
		if o := rec.Plans[i].Origin; o.File != "" {
			l := diff.LocationOf(o)
			rec.Plans[i].Location = &l
		}
	}
	rec.MarkStopped("")
	rec.Complete = true
	rec.Stopped = ""
	return rec
}

const rrCSV = "plan_id;plan_name;start_date;target_type;number_of_african_male_top_managers;number_of_african_female_top_managers;company_vat_number\n" +
	"17;Acme 2026;2026-09-01;all_employees;5;0;0412345678\n" +
	"18;Acme 2027;2027-09-01;all_employees;3;3;0412345678\n" +
	"\n" +
	";New;2027-09-01;all_employees;1;;0412345678\n"

func TestReconcileReportsGolden(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "client.csv")
	os.WriteFile(src, []byte(rrCSV), 0o644)
	rec := rrReconciliation("client.csv")
	rec.Files = []string{"client.csv"}
	for _, name := range []string{"report.json", "report.csv"} {
		path := filepath.Join(dir, name)
		var err error
		if strings.HasSuffix(name, ".json") {
			err = reports.WriteReconcileJSON(path, rec)
		} else {
			err = reports.WriteReconcileCSV(path, rec)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		golden := filepath.Join("testdata", "reconcile", name+".golden")
		if rrUpdate() {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s (run with -update if intended):\n%s", name, golden, got)
		}
	}
	// The JSON decodes back to the same reconciliation.
	var back diff.Reconciliation
	b, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if err := json.Unmarshal(b, &back); err != nil || back.Summary != rec.Summary || len(back.Plans) != len(rec.Plans) {
		t.Fatalf("decode: %v %+v", err, back.Summary)
	}
}

func TestReconcileXLSXFromCSV(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "client.csv")
	os.WriteFile(src, []byte("\xef\xbb\xbf"+rrCSV), 0o644)
	rec := rrReconciliation(src)
	out := filepath.Join(dir, "report.xlsx")
	if _, err := reports.WriteReconcileXLSX(out, src, rec); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if !slices.Equal(sheets, []string{reports.SummarySheet, reports.ChangesSheet, "client"}) || f.GetActiveSheetIndex() != 0 {
		t.Fatalf("sheets %v, active %d; want the Summary first and active, then the Changes", sheets, f.GetActiveSheetIndex())
	}
	// The Changes sheet, row by row: every marked cell with its values,
	// class and comment.
	changes, _ := f.GetRows(reports.ChangesSheet)
	wantChanges := [][]string{
		{"Sheet", "Cell", "Plan", "Financial year", "Target", "Counter or field", "File value", "Service value", "Class", "Last applied by eepipe", "Note (the cell's comment)"},
		{"client", "A2", "Acme 2026 (plan 17)", "", "", "sector", "Manufacturing", "Construction", "differs", "", `sector: the service holds "Construction" (workbook "Manufacturing")`},
		{"client", "E2", "Acme 2026 (plan 17)", "2026/27", "all_employees", "number_of_african_male_top_managers", "5", "7", "differs", "", "The service holds 7 (this workbook: 5)."},
		{"client", "F2", "Acme 2026 (plan 17)", "2026/27", "all_employees", "number_of_african_female_top_managers", "0", "1", "differs", "", "The service holds 1 (this workbook: 0)."},
		{"client", "A5", "New", "", "", "", "", "", "missing on the service", "", `Missing on the service: the service holds no plan "New" starting 2027-09-01`},
	}
	if !slices.EqualFunc(changes, wantChanges, slices.Equal) {
		t.Errorf("Changes rows:\n%q\nwant\n%q", changes, wantChanges)
	}
	rrCheckFits(t, f, reports.ChangesSheet, 1)
	rrCheckFits(t, f, reports.SummarySheet, 13)
	// Identifiers keep their leading zeros; counters are numbers.
	if v, _ := f.GetCellValue("client", "G2"); v != "0412345678" {
		t.Errorf("G2 = %q", v)
	}
	if typ, _ := f.GetCellType("client", "E2"); typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset {
		t.Errorf("E2 type %v", typ)
	}
	// Line 5 (after the blank line 4) is row 5.
	if v, _ := f.GetCellValue("client", "B5"); v != "New" {
		t.Errorf("B5 = %q, want the line-5 plan", v)
	}
	fills := map[string]string{}
	for _, ref := range []string{"A1", "A2", "E2", "F2", "A3", "E3", "A5", "B5", "E5"} {
		id, _ := f.GetCellStyle("client", ref)
		st, _ := f.GetStyle(id)
		if st != nil && st.Fill.Pattern == 1 && len(st.Fill.Color) > 0 {
			fills[ref] = rgbOf(st.Fill.Color[0])
		}
	}
	want := map[string]string{"E2": templates.DiffFill, "F2": templates.DiffFill, "A2": templates.PlanFill, "A5": templates.PlanFill}
	for ref, c := range want {
		if fills[ref] != c {
			t.Errorf("%s fill %q, want %q", ref, fills[ref], c)
		}
	}
	for ref := range fills {
		if _, ok := want[ref]; !ok {
			t.Errorf("%s filled %q unexpectedly", ref, fills[ref])
		}
	}
	comments, _ := f.GetComments("client")
	texts := map[string]string{}
	for _, c := range comments {
		texts[c.Cell] = commentText(c)
	}
	if !strings.Contains(texts["E2"], "service holds 7") || !strings.Contains(texts["F2"], "service holds 1") ||
		!strings.Contains(texts["A2"], `sector: the service holds "Construction"`) || !strings.Contains(texts["A5"], "Missing on the service") {
		t.Errorf("comments %v", texts)
	}
	rows, _ := f.GetRows(reports.SummarySheet)
	all := ""
	for _, r := range rows {
		all += strings.Join(r, "|") + "\n"
	}
	for _, frag := range []string{"differ", "only_on_server", "number_of_african_male_top_managers|5|7", "missing_on_server"} {
		if !strings.Contains(all, frag) {
			t.Errorf("Summary lacks %q:\n%s", frag, all)
		}
	}
}

func FuzzReconcileCSVCopy(f *testing.F) {
	f.Add([]byte(rrCSV))
	f.Add([]byte("a,b\n\"x,\"\"y\",1\n"))
	f.Add([]byte("\xef\xbb\xbfnumber_of_x\tplan_id\n1\t2\n"))
	f.Add([]byte("\"unterminated\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "in.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Skip()
		}
		out := filepath.Join(dir, "out.xlsx")
		if _, err := reports.WriteReconcileXLSX(out, path, &diff.Reconciliation{}); err != nil {
			return
		}
		wb, err := excelize.OpenFile(out)
		if err != nil {
			t.Fatalf("the copy does not open: %v", err)
		}
		defer wb.Close()
		if sheet := wb.GetSheetName(0); sheet == "" || len(sheet) > 31*4 {
			t.Fatalf("sheet name %q", sheet)
		}
	})
}

// rrCheckFits checks that every value below the header row of sheet fits
// its column's width (in characters) or wraps in it: nothing is cut.
func rrCheckFits(t *testing.T, f *excelize.File, sheet string, header int) {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for r := header; r < len(rows); r++ {
		for c, v := range rows[r] {
			col, _ := excelize.ColumnNumberToName(c + 1)
			w, _ := f.GetColWidth(sheet, col)
			if float64(utf8.RuneCountInString(v)) <= w {
				continue
			}
			ref := fmt.Sprintf("%s%d", col, r+1)
			id, _ := f.GetCellStyle(sheet, ref)
			st, _ := f.GetStyle(id)
			if st == nil || st.Alignment == nil || !st.Alignment.WrapText {
				t.Errorf("%s!%s: %q is cut in a column %.0f characters wide", sheet, ref, v, w)
			}
		}
	}
}

// rgbOf drops the alpha byte of an ARGB colour.
func rgbOf(c string) string {
	c = strings.ToUpper(c)
	if len(c) == 8 {
		return c[2:]
	}
	return c
}
