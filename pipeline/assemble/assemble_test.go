package assemble

import "github.com/eepipe/eepipe/pipeline/pipelinetest"

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// row builds a flat record from column=value pairs, each cell a text cell
// with a CSV origin (line n, column i+1).
func row(file string, line int, kv ...string) pipeline.Record {
	r := pipeline.Record{Origin: pipeline.Origin{File: file, Row: line}, Cells: map[string]pipeline.Cell{}}
	for i := 0; i+1 < len(kv); i += 2 {
		c := pipeline.Cell{Origin: pipeline.Origin{File: file, Row: line, Column: i/2 + 1, Header: kv[i]}}
		if strings.TrimSpace(kv[i+1]) != "" {
			c.Kind, c.Text = pipeline.CellText, kv[i+1]
		}
		r.Cells[kv[i]] = c
	}
	return r
}

func newPlanRow(line int, year, tt string, extra ...string) pipeline.Record {
	kv := append([]string{pipeline.ColCompanyVAT, "4012345678", pipeline.ColPlanName, "Acme", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31", pipeline.ColYearNumber, year, pipeline.ColTargetType, tt}, extra...)
	return row("a.csv", line, kv...)
}

func messages(ps pipeline.Problems) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func wantProblem(t *testing.T, ps pipeline.Problems, sev pipeline.Severity, substr string) pipeline.Problem {
	t.Helper()
	for _, p := range ps {
		if p.Severity == sev && strings.Contains(p.Message, substr) {
			return p
		}
	}
	t.Fatalf("no %s containing %q in:\n%s", sev, substr, messages(ps))
	return pipeline.Problem{}
}

func TestAssembleGroupsRowsIntoPlans(t *testing.T) {
	n := "number_of_african_male_top_managers"
	plans, ps := assemble([]pipeline.Record{
		newPlanRow(2, "1", "all_employees", n, "3"),
		newPlanRow(3, "1", "Disabled_Employees", n, "1"),
		newPlanRow(4, "2", "all_employees", n, ""),
		row("a.csv", 5, pipeline.ColPlanID, "17", pipeline.ColFinancialYear, "2026/27", pipeline.ColTargetType, "all_employees", n, "9"),
	}, nil)
	if len(ps) != 0 {
		t.Fatalf("problems:\n%s", messages(ps))
	}
	if len(plans) != 2 {
		t.Fatalf("got %d plans", len(plans))
	}
	p := plans[0]
	if p.Name != "Acme" || p.Company.VAT != "4012345678" || p.StartDate != pipelinetest.Day("2025-09-01") || len(p.Targets) != 3 {
		t.Fatalf("plan = %+v", p)
	}
	if tg := p.Targets[1]; tg.TargetType != pipeline.TargetDisabled || tg.Counters.Map()[n] != 1 || tg.YearNumber != 1 || tg.FinancialYear != 2025 {
		t.Errorf("target = %+v", tg)
	}
	if tg := p.Targets[2]; tg.Counters.Count() != 0 || tg.YearNumber != 2 || tg.FinancialYear != 2026 {
		t.Errorf("blank counter must be absent (leave as is): %+v", tg)
	}
	if q := plans[1]; q.PlanID != 17 || q.Targets[0].FinancialYear != 2026 || q.Targets[0].YearNumber != 0 {
		t.Errorf("existing plan = %+v %+v", q, q.Targets[0])
	}
	if c := p.Targets[0].CellOf(n); c.Row != 2 || c.Column != 7 {
		t.Errorf("counter origin = %+v", c)
	}
}

func TestAssembleConflictsAndDuplicates(t *testing.T) {
	_, ps := assemble([]pipeline.Record{
		row("a.csv", 2, pipeline.ColPlanID, "5", pipeline.ColSector, "Construction", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("b.csv", 7, pipeline.ColPlanID, "5", pipeline.ColSector, "Education", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
	}, nil)
	p := wantProblem(t, ps, pipeline.Error, "sector disagrees")
	if p.Origin.File != "b.csv" || p.Origin.Row != 7 || !strings.Contains(p.Message, "a.csv line 2") {
		t.Errorf("conflict must cite both rows: %v", p)
	}
	d := wantProblem(t, ps, pipeline.Error, "appears twice")
	if !strings.Contains(d.Message, "a.csv line 2") || d.Origin.Row != 7 {
		t.Errorf("duplicate must cite both rows: %v", d)
	}
}

func TestAssembleDuplicateAcrossYearForms(t *testing.T) {
	_, ps := assemble([]pipeline.Record{
		newPlanRow(2, "1", "all_employees"),
		row("a.csv", 3, pipeline.ColCompanyVAT, "4012345678", pipeline.ColPlanName, "Acme", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31", pipeline.ColFinancialYear, "2025/2026", pipeline.ColTargetType, "all_employees"),
	}, nil)
	wantProblem(t, ps, pipeline.Error, "appears twice: at line 2")
}

func TestAssemblePlanDates(t *testing.T) {
	_, ps := assemble([]pipeline.Record{
		row("a.csv", 2, pipeline.ColPlanName, "Early", pipeline.ColStartDate, "2025-08-31", pipeline.ColEndDate, "2031-01-01", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 3, pipeline.ColPlanName, "Backwards", pipeline.ColStartDate, "2027-01-01", pipeline.ColEndDate, "2026-01-01", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 4, pipeline.ColPlanName, "NoDates", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
	}, nil)
	wantProblem(t, ps, pipeline.Error, "start_date 2025-08-31 is before 2025-09-01")
	wantProblem(t, ps, pipeline.Warning, "clamp")
	wantProblem(t, ps, pipeline.Error, "end_date 2026-01-01 is before start_date")
	wantProblem(t, ps, pipeline.Error, "needs start_date")
	wantProblem(t, ps, pipeline.Error, "needs end_date")
}

// TestAssembleInvalidEndDateOnce: a new plan whose end date is written
// but invalid gets one error, at the end date's cell, not a second one
// saying the plan needs an end date (the errors are the planted cells).
func TestAssembleInvalidEndDateOnce(t *testing.T) {
	_, ps := assemble([]pipeline.Record{
		row("a.csv", 2, pipeline.ColPlanName, "Slashed", pipeline.ColStartDate, "2026-09-01", pipeline.ColEndDate, "31/08/2029", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 3, pipeline.ColPlanName, "Slashed", pipeline.ColStartDate, "2026-09-01", pipeline.ColEndDate, "", pipeline.ColYearNumber, "2", pipeline.ColTargetType, "all_employees"),
	}, nil)
	if len(ps) != 1 || ps[0].Origin.Row != 2 || ps[0].Origin.Column != 3 || !strings.Contains(ps[0].Message, "write it as 2029-08-31") {
		t.Fatalf("problems:\n%s\nwant one error at line 2, column 3", messages(ps))
	}
}

func TestAssembleYearsOutsidePlan(t *testing.T) {
	base := []string{pipeline.ColPlanName, "Short", pipeline.ColStartDate, "2026-03-01", pipeline.ColEndDate, "2027-02-28", pipeline.ColTargetType, "all_employees"}
	_, ps := assemble([]pipeline.Record{
		row("a.csv", 2, append(base, pipeline.ColYearNumber, "3")...),
		row("a.csv", 3, append(base, pipeline.ColFinancialYear, "2024/25")...),
		row("a.csv", 4, append(base, pipeline.ColYearNumber, "1", pipeline.ColFinancialYear, "2026/27")...),
		row("a.csv", 5, append(base, pipeline.ColYearNumber, "2", pipeline.ColFinancialYear, "2026/27")...),
	}, nil)
	// 2026-03-01 .. 2027-02-28 spans 2025/26 and 2026/27.
	wantProblem(t, ps, pipeline.Error, "year_number 3 is outside the plan")
	wantProblem(t, ps, pipeline.Error, "financial_year 2024/25 is outside the plan")
	p := wantProblem(t, ps, pipeline.Error, "year_number 1 and financial_year 2026/27 disagree")
	if p.Origin.Header != pipeline.ColFinancialYear {
		t.Errorf("disagreement should point at financial_year: %+v", p.Origin)
	}
	if ps.Count(pipeline.Error) != 3 {
		t.Errorf("want exactly 3 errors (year 2 = 2026/27 is right):\n%s", messages(ps))
	}
	// Each error is at its year cell, with the text found there.
	for _, w := range []struct {
		msg, header, value string
		row                int
	}{
		{"year_number 3 is outside", pipeline.ColYearNumber, "3", 2},
		{"financial_year 2024/25 is outside", pipeline.ColFinancialYear, "2024/25", 3},
		{"disagree", pipeline.ColFinancialYear, "2026/27", 4},
	} {
		p := wantProblem(t, ps, pipeline.Error, w.msg)
		if p.Origin.Row != w.row || p.Origin.Header != w.header || p.Origin.Column == 0 || p.Value != w.value {
			t.Errorf("%q at %+v, value %q; want row %d, column %s, value %q", w.msg, p.Origin, p.Value, w.row, w.header, w.value)
		}
	}
	// The same written otherwise (a year number with spaces) keeps its text.
	_, ps = assemble([]pipeline.Record{row("a.csv", 2, append(base, pipeline.ColYearNumber, " 3 ")...)}, nil)
	if p := wantProblem(t, ps, pipeline.Error, "year_number 3 is outside"); p.Value != " 3 " || p.Origin.Row != 2 {
		t.Errorf("year written with spaces: %+v, value %q", p.Origin, p.Value)
	}
}

func TestAssembleDomainWarnings(t *testing.T) {
	cat := pipeline.DefaultCatalog()
	all := []string{}
	dis := []string{}
	for i, level := range pipeline.OccupationalLevels {
		name, _ := cat.Counter("indian", "female", level)
		all = append(all, name, "2")
		v := "0"
		if i == 0 {
			v = "3" // above all_employees' 2
		}
		dis = append(dis, name, v)
	}
	total, _ := cat.Counter("indian", "female", "total_permanent_employees")
	temp, _ := cat.Counter("indian", "female", "temporary_employees")
	grand, _ := cat.Counter("indian", "female", "grand_total_employees")
	all = append(all, total, "12", temp, "1", grand, "14")
	dis = append(dis, total, "3")
	_, ps := assemble([]pipeline.Record{newPlanRow(2, "1", "all_employees", all...), newPlanRow(3, "1", "disabled_employees", dis...)}, cat)
	if ps.HasErrors() {
		t.Fatalf("errors:\n%s", messages(ps))
	}
	w := wantProblem(t, ps, pipeline.Warning, "above the same counter for all_employees")
	if w.Origin.Row != 3 || w.Origin.Header != "number_of_indian_female_top_managers" {
		t.Errorf("warning origin = %+v", w.Origin)
	}
	wantProblem(t, ps, pipeline.Warning, "grand_total_employees is 14, but total permanent (12) plus temporary (1)")
	if ps.Count(pipeline.Warning) != 2 {
		t.Errorf("totals that add up must not warn:\n%s", messages(ps))
	}
	// A total with a part missing is not checked.
	_, ps = assemble([]pipeline.Record{newPlanRow(2, "1", "all_employees", total, "99", all[0], "1")}, cat)
	if len(ps) != 0 {
		t.Errorf("partial totals warned:\n%s", messages(ps))
	}
}

func TestAssembleRowProblems(t *testing.T) {
	_, ps := assemble([]pipeline.Record{
		row("a.csv", 2, pipeline.ColPlanName, "X", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31", pipeline.ColTargetType, "all_employees", "number_of_nobody_male_top_managers", "1"),
		row("a.csv", 3, pipeline.ColPlanName, "X", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31", pipeline.ColYearNumber, "2", "number_of_nobody_male_top_managers", "1"),
		row("a.csv", 4, pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 5, pipeline.ColPlanID, "0", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
	}, nil)
	wantProblem(t, ps, pipeline.Error, "neither year_number nor financial_year")
	wantProblem(t, ps, pipeline.Error, "target_type is missing")
	wantProblem(t, ps, pipeline.Error, "neither plan_id nor plan_name")
	wantProblem(t, ps, pipeline.Error, "plan_id must be a positive")
	u := wantProblem(t, ps, pipeline.Error, "not a counter of the catalog")
	if len(u.Suggestions) == 0 {
		t.Error("no suggestions for an unknown counter")
	}
	n := 0
	for _, p := range ps {
		if strings.Contains(p.Message, "not a counter") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("an unknown counter is reported once per file and sheet, got %d", n)
	}
}

// TestCheckRoutingNeedsCompanyAccountOrPlanID: with several accounts a plan needs a company, an account or a plan_id
// to be routed; an account column naming no configured account is an
// error naming the configured ones.
func TestCheckRoutingNeedsCompanyAccountOrPlanID(t *testing.T) {
	plans, _ := assemble([]pipeline.Record{
		newPlanRow(2, "1", "all_employees"),
		row("a.csv", 3, pipeline.ColPlanID, "4", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 4, pipeline.ColPlanName, "No route", pipeline.ColStartDate, "2025-09-01", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 5, pipeline.ColAccount, "acme", pipeline.ColPlanName, "By account", pipeline.ColStartDate, "2025-09-01", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
		row("a.csv", 6, pipeline.ColAccount, "nosuch", pipeline.ColPlanName, "Unknown", pipeline.ColStartDate, "2025-09-01", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
	}, nil)
	accounts := []pipeline.Account{{Name: "acme"}, {Name: "bluecrane"}}
	ps := CheckRouting(plans, accounts)
	if len(ps) != 2 {
		t.Fatalf("CheckRouting = %s", messages(ps))
	}
	for _, p := range ps {
		switch p.Origin.Row {
		case 4:
			if !strings.Contains(p.Message, "no company identifier") || !strings.Contains(p.Message, "acme, bluecrane") {
				t.Errorf("row 4: %s", p.Message)
			}
		case 6:
			if !strings.Contains(p.Message, `names account "nosuch", which is not configured; the configured accounts are acme, bluecrane`) {
				t.Errorf("row 6: %s", p.Message)
			}
		default:
			t.Errorf("unexpected problem %s", p)
		}
	}
	if ps := CheckRouting(plans[:2], accounts[:1]); len(ps) != 0 {
		t.Errorf("one account: %s", messages(ps))
	}
}

func TestAssembleLostLeadingZero(t *testing.T) {
	r := newPlanRow(2, "1", "all_employees")
	c := r.Cells[pipeline.ColCompanyVAT]
	c.Kind, c.Number, c.Text = pipeline.CellNumber, 412345678, "412345678"
	r.Cells[pipeline.ColCompanyVAT] = c
	r.Cells[pipeline.ColCompanyIDNumber] = pipeline.Cell{Kind: pipeline.CellNumber, Number: 12345678901, Text: "0012345678901", Origin: pipeline.Origin{File: "a.csv", Row: 2, Column: 9}}
	plans, ps := assemble([]pipeline.Record{r}, nil)
	w := wantProblem(t, ps, pipeline.Warning, "has 9 digits, but these numbers have 10")
	if w.Origin.Header != pipeline.ColCompanyVAT || len(ps) != 1 {
		t.Errorf("want one warning on the VAT cell (the padded ID number is fine):\n%s", messages(ps))
	}
	if plans[0].Company.VAT != "412345678" || plans[0].Company.IDNumber != "0012345678901" {
		t.Errorf("company = %+v", plans[0].Company)
	}
}

func TestAssembleSplitPlan(t *testing.T) {
	_, ps := assemble([]pipeline.Record{
		newPlanRow(2, "1", "all_employees"),
		row("a.csv", 3, pipeline.ColCompanyVAT, "4012345678", pipeline.ColCompanyRegistration, "2009/012345/07", pipeline.ColPlanName, "Acme", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "disabled_employees"),
		row("a.csv", 4, pipeline.ColCompanyVAT, "4099999999", pipeline.ColPlanName, "Acme", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31", pipeline.ColYearNumber, "1", pipeline.ColTargetType, "all_employees"),
	}, nil)
	p := wantProblem(t, ps, pipeline.Error, "describe the same plan")
	if p.Origin.Row != 3 || !strings.Contains(p.Message, "line 2") {
		t.Errorf("split plan problem = %v", p)
	}
	if ps.Count(pipeline.Error) != 1 {
		t.Errorf("a plan of another company with the same name is not the same plan:\n%s", messages(ps))
	}
}

// assemble feeds records one at a time to an Assembler, as the readers
// do, and returns what it finished with.
func assemble(records []pipeline.Record, cat *pipeline.Catalog) ([]*pipeline.InputPlan, pipeline.Problems) {
	a := NewAssembler(cat)
	for _, r := range records {
		a.Add(r)
	}
	return a.Finish()
}
