package assemble

import (
	"github.com/eepipe/eepipe/pipeline"
	"strings"
	"testing"
)

func TestTextLengthLimits(t *testing.T) {
	rec := func(name, vat, scorecard string) pipeline.Record {
		cells := map[string]pipeline.Cell{}
		for col, v := range map[string]string{pipeline.ColPlanName: name, pipeline.ColStartDate: "2025-09-01", pipeline.ColEndDate: "2030-08-31", pipeline.ColYearNumber: "1", pipeline.ColTargetType: "all_employees", pipeline.ColCompanyVAT: vat, pipeline.ColScorecardID: scorecard} {
			cells[col] = pipeline.Cell{Kind: pipeline.CellText, Text: v, Origin: pipeline.Origin{File: "f.csv", Row: 2, Header: col}}
		}
		return pipeline.Record{Origin: pipeline.Origin{File: "f.csv", Row: 2}, Cells: cells}
	}
	for _, tc := range []struct {
		name, vat, scorecard, want string
	}{
		{strings.Repeat("n", pipeline.MaxPlanNameLen), strings.Repeat("4", pipeline.MaxIdentifierLen), "scorecard_" + strings.Repeat("s", pipeline.MaxIdentifierLen-10), ""},
		{strings.Repeat("n", pipeline.MaxPlanNameLen+1), "4", "scorecard_1", "plan_name is 201 characters long; at most 200"},
		{"N", strings.Repeat("4", pipeline.MaxIdentifierLen+1), "scorecard_1", "company_vat_number is 65 characters long; at most 64"},
		{"N", "4", "scorecard_" + strings.Repeat("s", pipeline.MaxIdentifierLen), "scorecard_id is 74 characters long; at most 64"},
	} {
		_, ps := assemble([]pipeline.Record{rec(tc.name, tc.vat, tc.scorecard)}, nil)
		var errs []string
		for _, p := range ps {
			if p.Severity == pipeline.Error {
				errs = append(errs, p.Message)
			}
		}
		got := strings.Join(errs, "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("errors %q, want %q", got, tc.want)
		}
	}
}
