package reports

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestHistoryCSVNeutralisesEveryField: history --report h.csv is a CSV file
// eepipe writes like any other: a plan name, a user or a file name that a
// spreadsheet would run as a formula is written with a leading quote.
func TestHistoryCSVNeutralisesEveryField(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	evil := `=HYPERLINK("http://evil","x")`
	h := &HistoryReport{
		Entries: []pipeline.HistoryEntry{{Run: pipeline.RunRecord{ID: 1, Started: at, User: "@ann"}, Account: "acme", PlanID: 17,
			PlanName: evil, TargetID: 1700, YearNumber: 1, TargetType: "all_employees", Counter: "c", After: 5, Sent: true, Outcome: "ok", At: at, File: "+v1.csv"}},
	}
	path := filepath.Join(t.TempDir(), "h.csv")
	if err := WriteHistoryReport(path, h); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, r := range rows[1:] {
		for _, c := range r {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
				t.Errorf("field %q is written as a live formula", c)
			}
			seen = append(seen, c)
		}
	}
	for _, want := range []string{"'" + evil, "'@ann", "'+v1.csv"} {
		if !strings.Contains(strings.Join(seen, "\n"), want) {
			t.Errorf("no field %q in %q", want, seen)
		}
	}
}
