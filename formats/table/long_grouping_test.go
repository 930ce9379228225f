package table_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/pipeline"
)

// TestLongLinesGroupBySameIdentifier: the lines of one target in the long
// layout that spell the company's registration number and the account
// differently are one target of one plan (the assembler's grouping rule),
// not the same target twice.
func TestLongLinesGroupBySameIdentifier(t *testing.T) {
	const c1, c2 = "number_of_african_male_top_managers", "number_of_white_female_unskilled_employees"
	path := filepath.Join(t.TempDir(), "long.csv")
	csv := "account,company_registration_number,plan_name,start_date,end_date,year_number,target_type,counter,value\n" +
		"acme,2011/004512/07,Long Plan,2025-09-01,2027-08-31,1,all_employees," + c1 + ",5\n" +
		"ACME,2011-004512-07,Long Plan,2025-09-01,2027-08-31,1,all_employees," + c2 + ",3\n" +
		"acme, 2011 004512 07 ,Long Plan,2025-09-01,2027-08-31,2,all_employees," + c1 + ",6\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Problems) > 0 {
		t.Fatalf("problems:\n%s", readback.ProblemsText(b.Problems))
	}
	if len(b.Plans) != 1 || len(b.Plans[0].Targets) != 2 {
		t.Fatalf("%d plans, want one with two targets: %+v", len(b.Plans), readback.Model(b.Plans))
	}
	p := b.Plans[0]
	if p.Company.Registration != "2011/004512/07" || p.Account != "acme" {
		t.Errorf("the plan keeps the first line's spelling: %+v, account %q", p.Company, p.Account)
	}
	got := p.Targets[0].Counters
	if v, _ := got.ByName(c1); v != 5 {
		t.Errorf("%s = %d, want 5", c1, v)
	}
	if v, _ := got.ByName(c2); v != 3 {
		t.Errorf("%s = %d, want 3", c2, v)
	}
	if p.Targets[1].YearNumber != 2 || p.Targets[0].TargetType != pipeline.TargetAll {
		t.Errorf("targets: %+v", readback.Model(b.Plans))
	}
}
