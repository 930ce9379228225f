package reports_test

import (
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// acceptanceDir holds the acceptance fixtures: workbooks other programs
// wrote (testdata/acceptance).
const acceptanceDir = "../../testdata/acceptance"

// writeReconcileXLSX writes the XLSX reconciliation report of r over src
// to dst.
func writeReconcileXLSX(dst, src string, r *diff.Reconciliation) error {
	_, err := reports.WriteReconcileXLSX(dst, src, r)
	return err
}

// overviewHeaderRow is the 1-based row of the export Overview's table
// header.
func overviewHeaderRow(t *testing.T, rows [][]string) int {
	t.Helper()
	for i, r := range rows {
		if len(r) > 1 && r[0] == "Sheet" && r[1] == "Plan no." {
			return i + 1
		}
	}
	t.Fatalf("no Overview header in %q", rows)
	return 0
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
