package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestSavedChangeSetDriftNamesCells: a saved change set that drifted names
// the file cell of each drifted plan field and counter, as a workbook's
// messages do (the set stores the cell as text; it is read back).
func TestSavedChangeSetDriftNamesCells(t *testing.T) {
	s := newStateEnv(t, "")
	secA, secB, secC := pipeline.Sectors[0], pipeline.Sectors[4], pipeline.Sectors[5]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Celled", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Celled")
	v2 := s.fieldsCSV("v2.csv", id, "Celled", secC, cAMT, 2)
	cs := filepath.Join(s.dir, "changes.json")
	if r := s.eepipe("diff", v2, "-o", cs); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	// Where the file holds the two values (CSV columns, 1-based).
	b, err := os.ReadFile(v2)
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Split(strings.SplitN(string(b), "\n", 2)[0], ",")
	at := func(col string) string {
		i := slices.Index(header, strings.TrimSpace(col))
		if i < 0 {
			t.Fatalf("no column %s in %v", col, header)
		}
		return fmt.Sprintf("v2.csv line 2, column %d: ", i+1)
	}
	s.serviceRename(id, "", secB)
	s.serviceEdit("Celled", cAMT, 7)
	r := s.eepipe("apply", cs, "--no-recalc")
	if r.code != 1 || !strings.Contains(r.err, "What drifted") {
		t.Fatalf("drifted change set: exit %d\n%s", r.code, r.err)
	}
	var field, counter string
	for _, l := range strings.Split(r.err, "\n") {
		switch {
		case strings.Contains(l, "sector: the change set expects"):
			field = l
		case strings.Contains(l, cAMT+": the change set was computed against"):
			counter = l
		}
	}
	for l, want := range map[string]string{field: at("sector"), counter: at(cAMT)} {
		if !strings.HasPrefix(strings.TrimSpace(l), want) {
			t.Errorf("the drift %q does not start with its cell %q\n%s", l, want, r.err)
		}
	}
}
