package formats

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestPlanFieldOrigins: the reader keeps where each plan field was read,
// so that reconcile marks the field's cell without reading the file again.
func TestPlanFieldOrigins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.csv")
	body := "company_vat_number,plan_name,start_date,end_date,year_number,target_type,sector,number_of_african_male_top_managers\n" +
		"4012345678,Acme,2026-09-01,2030-08-31,1,all_employees,,3\n" +
		"4012345678,Acme,2026-09-01,2030-08-31,2,all_employees,Manufacturing,4\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFiles([]string{path}, ReadOptions{})
	if err != nil || len(b.Plans) != 1 {
		t.Fatalf("%v, %d plans, %v", err, len(b.Plans), b.Problems)
	}
	p := b.Plans[0]
	for col, want := range map[string][2]int{
		pipeline.ColPlanName: {2, 2}, pipeline.ColStartDate: {2, 3}, pipeline.ColEndDate: {2, 4},
		pipeline.ColSector: {3, 7}, // the first row that gives it
	} {
		o := p.FieldOrigin(col)
		if o.File != path || o.Row != want[0] || o.Column != want[1] {
			t.Errorf("%s read at %+v, want line %d, column %d", col, o, want[0], want[1])
		}
	}
	if o := p.FieldOrigin(pipeline.ColScorecardID); o != p.Origin {
		t.Errorf("scorecard_id, not given, at %+v; want the plan's origin", o)
	}
}
