package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
)

// TestScorecardsCommand: eepipe scorecards lists every configured
// account's scorecards (id, description, period, charter, province),
// --account narrows, --json gives the same lists; a refused key pair
// names its account and the others are listed (exit 1).
func TestScorecardsCommand(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	r := e.run("--config", e.config, "scorecards")
	if r.code != 0 {
		t.Fatalf("scorecards: exit %d\n%s", r.code, r.err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	want := []string{
		"ACCOUNT ID DESCRIPTION PERIOD CHARTER PROVINCE",
		"acme scorecard_acme_2025 Acme Foods B-BBEE scorecard 2025 2025-03-01 to 2026-02-28 alpha_generic National",
		"acme scorecard_acme_2026 Acme Foods B-BBEE scorecard 2026 2026-03-01 to 2027-02-28 alpha_generic National",
		"bluecrane scorecard_bluecrane_2025 Blue Crane Logistics B-BBEE scorecard 2025 2025-03-01 to 2026-02-28 alpha_transport_road_freight Gauteng",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("scorecards:\n%s\nwant the rows\n%s", r.out, strings.Join(want, "\n"))
	}
	r = e.run("--config", e.config, "scorecards", "--account", "BlueCrane", "--json")
	var lists []run.AccountScorecards
	if err := json.Unmarshal([]byte(r.out), &lists); err != nil || r.code != 0 {
		t.Fatalf("scorecards --json: exit %d, %v\n%s%s", r.code, err, r.out, r.err)
	}
	if len(lists) != 1 || lists[0].Account != "bluecrane" || len(lists[0].Scorecards) != 1 || lists[0].Scorecards[0].ID != "scorecard_bluecrane_2025" ||
		lists[0].Scorecards[0].CharterID == "" || lists[0].Scorecards[0].StartDate == "" {
		t.Errorf("scorecards --account bluecrane --json: %+v", lists)
	}
	if r := e.run("--config", e.config, "scorecards", "--account", "nobody"); r.code != ExitInvalid || !strings.Contains(r.err, "--account nobody is not a configured account") {
		t.Errorf("unknown --account: exit %d\n%s", r.code, r.err)
	}
	e.vars["CRANE_SECRET"] = "wrong"
	r = e.run("--config", e.config, "scorecards")
	if r.code != ExitDiff || !strings.Contains(r.out, "scorecard_acme_2025") || strings.Contains(r.out, "scorecard_bluecrane") ||
		!strings.Contains(r.err, "account bluecrane") || !strings.Contains(r.err, "its scorecards are not listed") || strings.Contains(r.err, "wrong") {
		t.Errorf("a refused key pair: exit %d, want 1, acme's listed and bluecrane named\n%s%s", r.code, r.out, r.err)
	}
	e.vars["ACME_SECRET"] = "wrong"
	if r := e.run("--config", e.config, "scorecards"); r.code != ExitFatal {
		t.Errorf("every key pair refused: exit %d, want 3\n%s", r.code, r.err)
	}
}

// TestUnknownScorecardPointsToScorecards: diff warns of a plan whose
// scorecard_id its account does not have, pointing to eepipe scorecards,
// as validate does of a value that is no scorecard id at all.
func TestUnknownScorecardPointsToScorecards(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: "Known", start: "2025-09-01", end: "2030-08-31", scorecard: "scorecard_acme_2025", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatAcme, name: "Other's", start: "2025-09-01", end: "2030-08-31", scorecard: "scorecard_bluecrane_2025", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	r := e.run("--config", e.config, "diff", file)
	const want = `plan \"Other's\" starting 2025-09-01 names scorecard_id scorecard_bluecrane_2025, which account acme does not have: the service would refuse the plan; eepipe scorecards lists each account's scorecards`
	if r.code != ExitDiff || !strings.Contains(r.err, want) || strings.Contains(r.err, "scorecard_id scorecard_acme_2025") {
		t.Errorf("diff: exit %d, want 1 and the warning for the other account's scorecard only\n%s", r.code, r.err)
	}
	bad := filepath.Join(e.dir, "bad.csv")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, bad, strings.Replace(string(b), "scorecard_acme_2025", "acme_2025", 1), 0o600)
	if r := e.run("validate", bad); r.code != ExitInvalid || !strings.Contains(r.out, `"acme_2025" is not a scorecard id; scorecard ids start with scorecard_ (eepipe scorecards lists each account's scorecards)`) {
		t.Errorf("validate: exit %d\n%s", r.code, r.out)
	}
}
