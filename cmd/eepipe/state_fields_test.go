package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// fieldsCSV writes the one-row workbook of plan "Fielded" with name, sector
// and, when id is not 0, its plan_id (as an export writes it).
func (s *stateEnv) fieldsCSV(file string, id int64, name, sector string, kv ...any) string {
	r := row{name: name, start: "2025-09-01", end: "2030-08-31", sector: sector, year: 1, typ: pipeline.TargetAll, counters: counters(kv...)}
	if id != 0 {
		r.planID = fmt.Sprint(id)
	}
	return writeCSV(s.t, filepath.Join(s.dir, file), []row{r})
}

// servicePlan returns the name and sector the service holds for plan id.
func (s *stateEnv) servicePlan(id int64) (name, sector string) {
	s.t.Helper()
	p, err := s.client.GetPlan(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	if p.Sector != nil {
		sector = *p.Sector
	}
	return p.Name, sector
}

// serviceRename changes a plan's name and sector as the client would in
// the web app ("" leaves one alone).
func (s *stateEnv) serviceRename(id int64, name, sector string) {
	s.t.Helper()
	var u apiclient.PlanUpdate
	if name != "" {
		u.Name = &name
	}
	if sector != "" {
		ns := apiclient.NullString(sector)
		u.Sector = &ns
	}
	if _, err := s.client.UpdatePlan(context.Background(), id, u); err != nil {
		s.t.Fatal(err)
	}
}

// TestThreeWayPlanFields: plan fields are classified three ways like
// counters. A plan's name and sector changed on the service since eepipe
// applied them are not overwritten by a re-apply of the old workbook
// (exit 1, nothing written, reported with the file, service and last
// applied values and the run); --overwrite-service-changes writes them; a
// change in the file is written; a change in both is a held conflict;
// diff and reconcile (JSON and CSV) show the classes.
func TestThreeWayPlanFields(t *testing.T) {
	s := newStateEnv(t, "")
	testThreeWayFields(t, s)
}

func testThreeWayFields(t *testing.T, s *stateEnv) {
	sb := s.srv.Sandbox
	secA, secB, secC := pipeline.Sectors[0], pipeline.Sectors[4], pipeline.Sectors[5]
	// (1) create the plan: its fields are recorded as applied by run 1.
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Fielded", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Fielded")
	v1 := s.fieldsCSV("v1.csv", id, "Fielded", secA, cAMT, 1) // the workbook as exported after the apply

	// (2) the client renames the plan and changes its sector.
	s.serviceRename(id, "Renamed by client", secB)

	// (3) the old workbook again: both fields held, exit 1, nothing written.
	sb.ResetStats()
	r := s.eepipe("apply", v1, "--no-recalc")
	if r.code != 1 || sb.Stats().Writes != 0 {
		t.Fatalf("apply v1 again: exit %d, %d writes; want 1 and 0\n%s", r.code, sb.Stats().Writes, r.err)
	}
	if n, sec := s.servicePlan(id); n != "Renamed by client" || sec != secB {
		t.Fatalf("service holds %q / %q after the held apply", n, sec)
	}
	for _, w := range []string{"2 plan fields changed on the service since eepipe last wrote them were NOT overwritten",
		`field name: file "Fielded", service "Renamed by client", last applied "Fielded" by run 1 on`,
		`field sector: file "` + secA + `", service "` + secB + `", last applied "` + secA + `" by run 1`,
		"from " + filepath.Join(s.dir, "new.csv"), "changed on the service since run 1", "v1.csv line 2", "--overwrite-service-changes"} {
		if !strings.Contains(r.err, w) {
			t.Errorf("the message lacks %q:\n%s", w, r.err)
		}
	}
	// The run report lists them (held column).
	report := filepath.Join(s.dir, "run.csv")
	if r := s.eepipe("apply", v1, "--no-recalc", "--report", report); r.code != 1 {
		t.Fatalf("apply --report: exit %d\n%s", r.code, r.err)
	}
	if b, _ := os.ReadFile(report); !strings.Contains(string(b), `plan field name: file ""Fielded"", service ""Renamed by client""`) {
		t.Errorf("the run report lacks the held field:\n%s", b)
	}
	// diff says the same, and would send nothing.
	if r := s.eepipe("diff", v1); r.code != 1 || !strings.Contains(r.out, "2 plan fields changed on the service") || !strings.Contains(r.out, "0 to update") {
		t.Errorf("diff: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// reconcile classifies them, with the value last applied and its run.
	rec := s.reconcile(v1)
	got := map[string]diff.FieldDifference{}
	for _, p := range rec.Plans {
		for _, f := range p.Fields {
			got[f.Field] = f
		}
	}
	if f := got["name"]; f.Class != diff.ClassService || f.LastApplied == nil || f.LastApplied.Value != "Fielded" || f.LastApplied.RunID != 1 {
		t.Errorf("reconcile name = %+v", f)
	}
	if f := got["sector"]; f.Class != diff.ClassService || f.LastApplied == nil || f.LastApplied.Value != secA {
		t.Errorf("reconcile sector = %+v", f)
	}
	if r := s.eepipe("reconcile", v1); r.code != 1 ||
		!strings.Contains(r.out, `name: workbook "Fielded", service "Renamed by client", last applied "Fielded": changed on the service since run 1`) {
		t.Errorf("reconcile: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	recCSV := filepath.Join(s.dir, "rec.csv")
	if r := s.eepipe("reconcile", v1, "--report", recCSV); r.code != 1 {
		t.Fatalf("reconcile csv: exit %d\n%s", r.code, r.err)
	}
	if !csvHasRow(t, recCSV, map[string]string{"kind": "field", "name": "name", "class": string(diff.ClassService),
		"last_applied_value": "Fielded", "last_applied_run": "1", "server_value": "Renamed by client"}) {
		b, _ := os.ReadFile(recCSV)
		t.Errorf("the reconcile CSV lacks the classified field row:\n%s", b)
	}

	// (4) --overwrite-service-changes writes them.
	if r := s.eepipe("apply", v1, "--no-recalc", "--overwrite-service-changes"); r.code != 0 || !strings.Contains(r.err, "2 plan fields changed on the service since eepipe last wrote them; overwritten") {
		t.Fatalf("overwrite: exit %d\n%s", r.code, r.err)
	}
	if n, sec := s.servicePlan(id); n != "Fielded" || sec != secA {
		t.Fatalf("service holds %q / %q after the overwrite", n, sec)
	}

	// (5) a change in the file is written (changed in the file).
	v2 := s.fieldsCSV("v2.csv", id, "Fielded", secC, cAMT, 1)
	if r := s.eepipe("diff", v2); r.code != 1 || !strings.Contains(r.out, `sector: "`+secA+`" -> "`+secC+`"  (changed in the file)`) {
		t.Errorf("diff v2: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if r := s.eepipe("apply", v2, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v2: exit %d\n%s", r.code, r.err)
	}
	if _, sec := s.servicePlan(id); sec != secC {
		t.Fatalf("service sector %q after v2, want %q", sec, secC)
	}

	// (6) changed in both: a conflict, held.
	s.serviceRename(id, "Client's name", "")
	v3 := s.fieldsCSV("v3.csv", id, "Consultant's name", secC, cAMT, 1)
	sb.ResetStats()
	r = s.eepipe("apply", v3, "--no-recalc")
	if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "1 plan field changed on the service") ||
		!strings.Contains(r.err, `last applied "Fielded" by run`) || !strings.Contains(r.err, "(conflict)") {
		t.Fatalf("conflict: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
	if n, _ := s.servicePlan(id); n != "Client's name" {
		t.Fatalf("service name %q after the held conflict", n)
	}
}

// csvHasRow reports whether the CSV file has a row with the given values
// in the named columns.
func csvHasRow(t *testing.T, path string, want map[string]string) bool {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
rows:
	for _, rec := range recs[1:] {
		for k, v := range want {
			i, ok := col[k]
			if !ok || rec[i] != v {
				continue rows
			}
		}
		return true
	}
	return false
}

// TestStateStoreFailureStopsApply: when the state store fails to record a
// write in the middle of an apply (here an SQLite trigger refuses the
// store's second write record), the run stops writing at once: the write
// whose record failed is the last one sent, the plans after it are listed
// as not applied, and the run exits 3 naming the store's failure.
func TestStateStoreFailureStopsApply(t *testing.T) {
	s := newStateEnv(t, "")
	names := []string{"Halt A", "Halt B", "Halt C", "Halt D"}
	mk := func(file string, v int) string {
		var rows []row
		for _, n := range names {
			rows = append(rows, row{name: n, start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, v)})
		}
		return writeCSV(t, filepath.Join(s.dir, file), rows)
	}
	if r := s.eepipe("apply", mk("v1.csv", 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.code, r.err)
	}
	// The store fails after one more target write is recorded.
	db, err := sql.Open("sqlite", s.state)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM eepipe_writes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`CREATE TRIGGER fail_after AFTER INSERT ON eepipe_writes WHEN (SELECT COUNT(*) FROM eepipe_writes) > %d
		BEGIN SELECT RAISE(ABORT, 'disk full (injected)'); END`, n+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	sb := s.srv.Sandbox
	sb.ResetStats()
	report := filepath.Join(s.dir, "run.json")
	r := s.eepipe("apply", mk("v2.csv", 2), "--no-recalc", "--concurrency", "1", "--report", report)
	if r.code != 3 {
		t.Fatalf("apply v2 with a failing store: exit %d, want 3\n%s", r.code, r.err)
	}
	// The recorded write only: a write is recorded before it is sent, so
	// the one whose record failed was not sent, nor anything after it.
	if w := sb.Stats().Writes; w != 1 {
		t.Errorf("%d writes sent, want 1 (the one recorded; the next one's record failed before it was sent)\n%s", w, r.err)
	}
	for _, w := range []string{"the state store failed to record a write", "disk full (injected)", "the run stopped writing",
		"could not be recorded in the state store"} {
		if !strings.Contains(r.err, w) {
			t.Errorf("the message lacks %q:\n%s", w, r.err)
		}
	}
	changed := 0
	for _, name := range names {
		_, _, _, c := s.target(name)
		if c[cAMT] == 2 {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d plans changed on the service, want 1", changed)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Rows []struct {
			PlanName string `json:"plan_name"`
			Outcome  string `json:"outcome"`
			Error    string `json:"error"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, row := range rep.Rows {
		outcomes[row.Outcome]++
	}
	// One written; the second not sent (its target not applied, its plan
	// failed naming the store: "before they were sent"); two not sent.
	if outcomes["updated"] != 1 || outcomes["not applied"] != 3 || len(rep.Rows) != 4 ||
		!strings.Contains(string(b), "could not be recorded in the state store before they were sent") {
		t.Errorf("report rows %v, want 1 updated and 3 not applied (one whose record failed before it was sent):\n%s", outcomes, b)
	}
}

// TestSavedChangeSetGuardsFields: a saved change set carries each plan
// field it writes with the service value it was computed against; a field
// changed on the service since is drift (nothing written, exit 1), and
// the field it writes counts as applied by its run.
func TestSavedChangeSetGuardsFields(t *testing.T) {
	s := newStateEnv(t, "")
	sb := s.srv.Sandbox
	secA, secB, secC := pipeline.Sectors[0], pipeline.Sectors[4], pipeline.Sectors[5]
	if r := s.eepipe("apply", s.fieldsCSV("new.csv", 0, "Signed", secA, cAMT, 1), "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	id, _, _, _ := s.target("Signed")
	v2 := s.fieldsCSV("v2.csv", id, "Signed", secC, cAMT, 1)
	cs := filepath.Join(s.dir, "changes.json")
	if r := s.eepipe("diff", v2, "-o", cs); r.code != 1 {
		t.Fatalf("diff -o: exit %d\n%s", r.code, r.err)
	}
	// Read as apply reads it: streamed, one plan at a time.
	var plans []savedset.SavedPlan
	if _, err := (&reports.ChangeSetFile{Path: cs}).Read(func(_ *savedset.SavedChangeSet, _ int, p *savedset.SavedPlan, _ [sha256.Size]byte) error {
		plans = append(plans, *p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || len(plans[0].Fields) != 1 ||
		plans[0].Fields[0].Field != "sector" || plans[0].Fields[0].Expected != secA || plans[0].Fields[0].New != secC {
		t.Fatalf("saved plans %+v", plans)
	}
	// The client changes the sector: the set has drifted.
	s.serviceRename(id, "", secB)
	sb.ResetStats()
	r := s.eepipe("apply", cs, "--no-recalc")
	if r.code != 1 || sb.Stats().Writes != 0 || !strings.Contains(r.err, "nothing was sent") ||
		!strings.Contains(r.err, `sector: the change set expects "`+secA+`" on the service, it now holds "`+secB+`"`) {
		t.Fatalf("drifted change set: exit %d, %d writes\n%s", r.code, sb.Stats().Writes, r.err)
	}
	if _, sec := s.servicePlan(id); sec != secB {
		t.Fatalf("service sector %q after the refused set", sec)
	}
	// Back to what it was computed against: it applies.
	s.serviceRename(id, "", secA)
	if r := s.eepipe("apply", cs, "--no-recalc"); r.code != 0 {
		t.Fatalf("change set: exit %d\n%s", r.code, r.err)
	}
	if _, sec := s.servicePlan(id); sec != secC {
		t.Fatalf("service sector %q after the set, want %q", sec, secC)
	}
	// What it wrote is the value last applied: a later change on the
	// service is recognised against it.
	s.serviceRename(id, "", secB)
	r = s.eepipe("apply", v2, "--no-recalc")
	if r.code != 1 || !strings.Contains(r.err, `field sector: file "`+secC+`", service "`+secB+`", last applied "`+secC+`" by run 2`) {
		t.Fatalf("apply after the set: exit %d\n%s", r.code, r.err)
	}
}
