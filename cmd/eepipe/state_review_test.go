package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestHeldFieldNamesItsCell: a plan field apply leaves alone is reported
// at the cell it was read from (the flat row's sector column), as a held
// counter is, in the log and in the JSON run report ("cell", the same
// shape as a counter's).
func TestHeldFieldNamesItsCell(t *testing.T) {
	s := newStateEnv(t, "")
	secA, secB := pipeline.Sectors[0], pipeline.Sectors[4]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Celled", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Celled")
	v1 := s.fieldsCSV("v1.csv", id, "Celled", secA, cAMT, 1)
	s.serviceRename(id, "", secB)

	report := filepath.Join(s.dir, "run.json")
	r := s.eepipe("apply", v1, "--no-recalc", "--report", report)
	if r.code != 1 {
		t.Fatalf("apply v1 again: exit %d\n%s", r.code, r.err)
	}
	// writeCSV's columns: vat, registration, plan_id, plan_name,
	// start_date, end_date, scorecard_id, sector (8), ...
	if !strings.Contains(r.err, `v1.csv line 2, column 8: plan `+fmt.Sprint(id)+` "Celled" field sector: file "`+secA+`"`) {
		t.Errorf("the held sector is not named at its cell (line 2, column 8):\n%s", r.err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Rows []struct {
			HeldFields []map[string]any `json:"held_fields"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var held []map[string]any
	for _, row := range rep.Rows {
		held = append(held, row.HeldFields...)
	}
	if len(held) != 1 || held[0]["field"] != "sector" || held[0]["cell"] != "line 2, column 8" ||
		held[0]["old"] != secB || held[0]["new"] != secA || held[0]["class"] != string(pipeline.ClassService) {
		t.Errorf("held_fields = %v, want sector at line 2, column 8", held)
	}
	if len(held) == 1 {
		if _, ok := held[0]["origin"]; ok {
			t.Errorf("held_fields carries the Go struct origin: %v", held[0])
		}
	}
}
