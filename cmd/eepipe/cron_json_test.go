package main

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
)

// TestCronRunsStderrJSON runs, as cron would (stdout and stderr files, not
// terminals), the commands an operations team schedules and the mistakes
// it makes, and parses every stderr line as a JSON event with level, ts
// and msg: a refused --log-format, a configuration error, a recalc, the
// history, a check where nothing could be assessed, the sandbox refusing
// its fixtures and an unknown command included.
func TestCronRunsStderrJSON(t *testing.T) {
	e := newCkEnv(t)
	vars := maps.Clone(e.vars)
	vars["EEPIPE_STATE"] = e.path("state.db")
	good := e.path("plans.csv")
	if err := table.WriteFlatCSV(good, ckPlans(t)[:2], nil); err != nil {
		t.Fatal(err)
	}
	noSector := e.path("nosector.csv")
	if err := table.WriteFlatCSV(noSector, []*pipeline.InputPlan{{Name: "No sector", StartDate: mustDate("2025-09-01"), EndDate: mustDate("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(ckCounters(t, map[string]int64{"african_male_top_managers": 2}))}}}}, nil); err != nil {
		t.Fatal(err)
	}
	badYAML := e.path("bad.yaml")
	if err := os.WriteFile(badYAML, []byte("base_ulr: http://127.0.0.1:1\naccounts:\n  - name: a\n    api_key: k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badFixtures := e.path("fixtures.json")
	if err := os.WriteFile(badFixtures, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		wantMsgs []string // substrings of some event's msg
	}{
		{"log format refused", []string{"--log-format", "xml", "version"}, ExitInvalid, []string{`--log-format "xml": use auto, console, json`}},
		{"log format refused before a command", []string{"--log-format", "xml", "validate", good}, ExitInvalid, []string{"--log-format"}},
		{"configuration error", []string{"--config", badYAML, "diff", good}, ExitInvalid, []string{`did you mean "base_url"?`}},
		{"apply with history", []string{"apply", good, "--no-recalc"}, ExitOK, []string{"Applied: plans 2 created"}},
		{"history", []string{"history", "--report", e.path("history.xlsx")}, ExitOK, []string{"History report written to"}},
		{"recalc", []string{"recalc", "scorecard_acme_2025", "--recalc-wait", "0"}, ExitOK, []string{"recalculation accepted"}},
		{"export flat", []string{"export", "-o", e.path("plans-export.csv")}, ExitOK, []string{"Exported 2 plans"}},
		{"check nothing assessable", []string{"check", noSector, "--report", e.path("c.xlsx"), "--report", e.path("c.csv")}, ExitDiff, []string{"nothing could be assessed", "Sector check report written to"}},
		{"sandbox bad fixtures", []string{"sandbox", "--listen", "127.0.0.1:0", "--fixtures", badFixtures}, ExitInvalid, nil},
		{"unknown command", []string{"frobnicate"}, ExitInvalid, []string{"unknown command"}},
		{"apply with problems", []string{"apply", filepath.Join("..", "..", "testdata", "bad", "bad_sector.csv")}, ExitInvalid, []string{"validation summary"}},
		{"unknown flag", []string{"export", "--frobnicate"}, ExitInvalid, []string{"unknown flag", "usage: eepipe export"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runWithFiles(t, vars, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			var msgs []string
			sc := bufio.NewScanner(strings.NewReader(stderr))
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				n++
				var ev map[string]any
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("stderr line %d is not JSON: %q\n%s", n, sc.Text(), stderr)
				}
				for _, k := range []string{"level", "ts", "msg"} {
					if _, ok := ev[k]; !ok {
						t.Errorf("stderr line %d has no %q: %s", n, k, sc.Text())
					}
				}
				msg, _ := ev["msg"].(string)
				msgs = append(msgs, msg)
				if n, ok := ev["plans_with_errors"].(float64); msg == "validation summary" && (!ok || (n < 1) == (tc.code == ExitInvalid)) {
					t.Errorf("the validation summary does not count the plans with errors: %s", sc.Text())
				}
			}
			if n == 0 {
				t.Fatal("nothing on stderr")
			}
			all := strings.Join(msgs, "\n")
			for _, w := range tc.wantMsgs {
				if !strings.Contains(all, w) {
					t.Errorf("no event with %q among:\n%s", w, all)
				}
			}
		})
	}
	for _, p := range []string{"c.xlsx", "c.csv"} {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err != nil {
			t.Errorf("check --report %s: %v", p, err)
		}
	}
}
