package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
)

// TestApplyRunEndNotRecorded: when the end of a run cannot be recorded
// in the state store (here its runs table is renamed away as the run
// asks for the recalculation, after its last write), the run's exit
// status is unchanged, and a warning, the printed summary and the run
// report name the cause.
func TestApplyRunEndNotRecorded(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	state := filepath.Join(e.dir, "state.db")
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{{name: "Unrecorded end", start: "2025-09-01", end: "2030-08-31",
		scorecard: "scorecard_acme_2025", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 7)}})
	var once sync.Once
	var renameErr error
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/recalculate") {
			once.Do(func() {
				db, err := sql.Open("sqlite", state)
				if err == nil {
					_, err = db.Exec(`ALTER TABLE eepipe_runs RENAME TO eepipe_runs_away`)
					db.Close()
				}
				renameErr = err
			})
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	report := filepath.Join(e.dir, "run.json")
	r := e.runApply(context.Background(), "", func(o *applyOptions) { o.HTTPClient = hc }, file, "--state", state, "--report", report)
	if renameErr != nil {
		t.Fatalf("renaming the runs table: %v", renameErr)
	}
	if r.code != ExitOK {
		t.Fatalf("exit %d, want %d (the run's outcome)\n%s", r.code, ExitOK, r.err)
	}
	const said = "could not be recorded in the state store"
	if !strings.Contains(r.err, "note: the end of run 1 "+said) || !strings.Contains(r.err, "eepipe_runs") {
		t.Errorf("the summary does not say it, with its cause:\n%s", r.err)
	}
	if !strings.Contains(r.err, `"level":"warn"`) || !strings.Contains(r.err, `"msg":"the end of run 1 `+said) {
		t.Errorf("no warning logged:\n%s", r.err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep reports.RunReportJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], said) || !strings.Contains(rep.Notes[0], "eepipe_runs") {
		t.Errorf("run report notes %q\n%s", rep.Notes, b)
	}
	if rep.Summary.PlansCreated != 1 || len(rep.Recalculations) != 1 || !rep.Recalculations[0].Accepted {
		t.Errorf("the run itself: %+v, recalculations %+v", rep.Summary, rep.Recalculations)
	}
	// With its table back, the store shows the run as still running, as
	// the note says.
	db, err := sql.Open("sqlite", state)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`ALTER TABLE eepipe_runs_away RENAME TO eepipe_runs`); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := db.QueryRow(`SELECT status FROM eepipe_runs WHERE id = 1`).Scan(&status); err != nil || status != "running" {
		t.Errorf("run 1 recorded as %q (%v), want running", status, err)
	}
}
