package pipeline

import (
	"strings"
	"testing"
)

func TestTextLengthLimits(t *testing.T) {
	rec := func(name, vat, scorecard string) Record {
		cells := map[string]Cell{}
		for col, v := range map[string]string{ColPlanName: name, ColStartDate: "2025-09-01", ColEndDate: "2030-08-31", ColYearNumber: "1", ColTargetType: "all_employees", ColCompanyVAT: vat, ColScorecardID: scorecard} {
			cells[col] = Cell{Kind: CellText, Text: v, Origin: Origin{File: "f.csv", Row: 2, Header: col}}
		}
		return Record{Origin: Origin{File: "f.csv", Row: 2}, Cells: cells}
	}
	for _, tc := range []struct {
		name, vat, scorecard, want string
	}{
		{strings.Repeat("n", maxPlanNameLen), strings.Repeat("4", maxIdentifierLen), "scorecard_" + strings.Repeat("s", maxIdentifierLen-10), ""},
		{strings.Repeat("n", maxPlanNameLen+1), "4", "scorecard_1", "plan_name is 201 characters long; at most 200"},
		{"N", strings.Repeat("4", maxIdentifierLen+1), "scorecard_1", "company_vat_number is 65 characters long; at most 64"},
		{"N", "4", "scorecard_" + strings.Repeat("s", maxIdentifierLen), "scorecard_id is 74 characters long; at most 64"},
	} {
		_, ps := assemble([]Record{rec(tc.name, tc.vat, tc.scorecard)}, nil)
		var errs []string
		for _, p := range ps {
			if p.Severity == Error {
				errs = append(errs, p.Message)
			}
		}
		got := strings.Join(errs, "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("errors %q, want %q", got, tc.want)
		}
	}
}
