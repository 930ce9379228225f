package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/pipeline"
)

// rosterFixture is a roster made with openpyxl and LibreOffice in a
// payroll system's shape (formats/roster/testdata/make_rosters.py).
func rosterFixture(name string) string {
	return filepath.Join("..", "..", "formats", "roster", "testdata", name)
}

// TestProfileProposeEndToEnd: rosters → profile → propose → validate →
// check → apply → diff, through the sandbox on 127.0.0.1, in both layouts:
// the proposed plan validates with no problem, check exits 0 on it, apply
// creates it, and diff then finds nothing to change.
func TestProfileProposeEndToEnd(t *testing.T) {
	e := newCkEnv(t)
	rosters := []string{rosterFixture("sage-vip-equity.csv"), rosterFixture("simplepay-skills-equity.xlsx"), rosterFixture("payspace-eea2-details.xlsx")}
	for _, out := range []string{"profile.xlsx", "profile.csv"} {
		args := append([]string{"profile"}, rosters...)
		args = append(args, "-o", e.path(out), "--sector", "Transport and Storage", "--as-of", "2026-10-01", "--json")
		r := e.run(args...)
		if r.code != ExitDiff {
			t.Fatalf("profile exit %d (want 1: some rows are not counted)\n%s", r.code, r.err)
		}
		var p struct {
			Employees    int `json:"employees"`
			Classified   int `json:"classified"`
			Unclassified []struct {
				File   string `json:"file"`
				Row    int    `json:"row"`
				Reason string `json:"reason"`
			} `json:"unclassified"`
			Targets map[string]map[string]int64 `json:"targets"`
		}
		if err := json.Unmarshal([]byte(r.out), &p); err != nil {
			t.Fatalf("profile --json: %v\n%s", err, r.out)
		}
		if p.Employees != 1008 || p.Classified != 1000 || len(p.Unclassified) != 8 || len(p.Targets[pipeline.TargetAll]) != 90 {
			t.Fatalf("profile: %d employees, %d classified, %d unclassified, %d counters", p.Employees, p.Classified, len(p.Unclassified), len(p.Targets[pipeline.TargetAll]))
		}
		if grand := sumSuffix(p.Targets[pipeline.TargetAll], "_grand_total_employees"); grand != 1000 {
			t.Fatalf("grand total %d", grand)
		}
		if err := os.WriteFile(e.path("profile.json"), []byte(r.out), 0o600); err != nil {
			t.Fatal(err)
		}
		// check reads the profile: the current workforce against the targets.
		c := e.run("check", e.path(out))
		if c.code != ExitDiff || !strings.Contains(c.out, `Plan "Current workforce" | Transport and Storage | 2026-09-01 to 2027-08-31`) {
			t.Fatalf("check profile exit %d\n%s\n%s", c.code, c.out, c.err)
		}
	}
	for i, tc := range []struct{ profile, plan, layout string }{
		{"profile.xlsx", "plan.xlsx", "grid"}, {"profile.csv", "plan.csv", "flat"}, {"profile.xlsx", "plan-flat.xlsx", "flat"},
		{"profile.json", "plan-json.csv", "flat"},
	} {
		name := "Acme Transport EE Plan " + tc.plan
		r := e.run("propose", "--profile", e.path(tc.profile), "--sector", "Transport and Storage", "--start", "2026-09-01",
			"--end", "2029-08-31", "--name", name, "--company-vat", vatAcme, "-o", e.path(tc.plan), "--layout", tc.layout, "--json")
		if r.code != ExitOK {
			t.Fatalf("propose %s exit %d\n%s\n%s", tc.plan, r.code, r.out, r.err)
		}
		var res struct {
			Years []struct {
				Final  bool `json:"final"`
				Levels []struct {
					Level     string `json:"level"`
					Headcount int64  `json:"headcount"`
					Moves     int64  `json:"moves"`
				} `json:"levels"`
			} `json:"years"`
		}
		if err := json.Unmarshal([]byte(r.out), &res); err != nil || len(res.Years) != 3 || !res.Years[2].Final {
			t.Fatalf("propose --json: %v\n%s", err, r.out)
		}
		if tc.layout == "grid" {
			checkSection4(t, e.path(tc.plan))
		}
		// 0 errors: the grid layout's workforce profile is named in a
		// warning (read as the baseline, never as a target).
		if v := e.run("validate", e.path(tc.plan)); v.code != ExitOK || !strings.Contains(v.out, "1 plan, 6 targets: ") || !strings.Contains(v.out, " 0 errors") && !strings.Contains(v.out, "no problems") {
			t.Fatalf("validate %s exit %d\n%s\n%s", tc.plan, v.code, v.out, v.err)
		}
		if c := e.run("check", e.path(tc.plan)); c.code != ExitOK || !strings.Contains(c.out, "MEETS every target") {
			t.Fatalf("check %s exit %d\n%s\n%s", tc.plan, c.code, c.out, c.err)
		}
		if a := e.run("apply", e.path(tc.plan), "--no-recalc"); a.code != ExitOK {
			t.Fatalf("apply %s exit %d\n%s\n%s", tc.plan, a.code, a.out, a.err)
		}
		if got := len(e.srv.Sandbox.Plans("acme")); got != i+1 {
			t.Fatalf("%d plans on the sandbox after applying %s", got, tc.plan)
		}
		if d := e.run("diff", e.path(tc.plan)); d.code != ExitOK {
			t.Fatalf("diff %s after apply exit %d (want 0: the plan was created exactly)\n%s\n%s", tc.plan, d.code, d.out, d.err)
		}
	}
}

// checkSection4 looks at the grid layout's workbook: the plan sheet with
// the workforce profile, the numerical targets and goals, set to print on
// A4.
func checkSection4(t *testing.T, path string) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if !slices.Contains(sheets, grid.Section4Sheet) {
		t.Fatalf("sheets %v", sheets)
	}
	var labels []string
	rows, err := f.GetRows(grid.Section4Sheet)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r) > 0 && strings.HasPrefix(r[0], "4.") {
			labels = append(labels, r[0])
		}
	}
	want := []string{
		"4.1 Workforce profile — All employees, including people with disabilities",
		"4.1 Workforce profile — People with disabilities",
		"4.3 Numerical targets — Year 1 — 2026/27 — All employees, including people with disabilities",
		"4.3 Numerical targets — Year 1 — 2026/27 — People with disabilities",
		"4.3 Numerical targets — Year 2 — 2027/28 — All employees, including people with disabilities",
		"4.3 Numerical targets — Year 2 — 2027/28 — People with disabilities",
		"4.2 Numerical goals — Year 3 — 2028/29 — All employees, including people with disabilities",
		"4.2 Numerical goals — Year 3 — 2028/29 — People with disabilities",
	}
	if !slices.Equal(labels, want) {
		t.Fatalf("plan sheet titles:\n%s", strings.Join(labels, "\n"))
	}
	pl, err := f.GetPageLayout(grid.Section4Sheet)
	if err != nil || pl.Size == nil || *pl.Size != 9 {
		t.Fatalf("%s does not print on A4: %v %+v", grid.Section4Sheet, err, pl)
	}
}

func sumSuffix(m map[string]int64, suffix string) int64 {
	var n int64
	for k, v := range m {
		if strings.HasSuffix(k, suffix) {
			n += v
		}
	}
	return n
}

// TestProfileProposeExitStatus: 0 when every row is counted; 2 for a file
// that is not a roster and for bad usage; propose exits 1 when a target
// cannot be met at its headcount (the nearest plan is still written) and 2
// on bad input.
func TestProfileProposeExitStatus(t *testing.T) {
	e := newCkEnv(t)
	good := e.path("good.csv")
	if err := os.WriteFile(good, []byte("Employee No,Race,Sex,Job Grade\n1,A,M,F1\n2,W,F,F2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("profile", good, "-o", e.path("small.xlsx"), "--sector", "Manufacturing", "--as-of", "2026-10-01"); r.code != ExitOK || !strings.Contains(r.out, "2 employee rows read: 2 counted, 0 not counted") {
		t.Fatalf("profile exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// --map: a client's headers and grading; a bad mapping file is bad input.
	client, mapFile := e.path("client.csv"), e.path("client.yaml")
	if err := os.WriteFile(client, []byte("Clock No,Ethnicity,Sex,Band\n7,A,F,P3\n8,A,F,P3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mapFile, []byte("columns:\n  race: [Ethnicity]\n  job_grade: [Band]\ngrades:\n  P3: top_managers\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("profile", client, "--map", mapFile, "--json"); r.code != ExitOK || !strings.Contains(r.out, `"number_of_african_female_top_managers": 2`) {
		t.Fatalf("profile --map exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if err := os.WriteFile(mapFile, []byte("grades:\n  P3: bosses\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("profile", client, "--map", mapFile); r.code != ExitInvalid || !strings.Contains(r.err, "client.yaml:2") {
		t.Fatalf("bad --map exit %d\n%s", r.code, r.err)
	}
	notRoster := e.path("names.csv")
	if err := os.WriteFile(notRoster, []byte("Name,Surname\nA,B\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("profile", notRoster); r.code != ExitInvalid || !strings.Contains(r.err, "not a roster") {
		t.Fatalf("not a roster: exit %d\n%s", r.code, r.err)
	}
	if r := e.run("profile"); r.code != ExitInvalid {
		t.Fatalf("no roster: exit %d", r.code)
	}
	if r := e.run("profile", good, "-o", e.path("p.pdf")); r.code != ExitInvalid {
		t.Fatalf("-o .pdf: exit %d", r.code)
	}
	// A top level of one person cannot be 24.1% designated men and 25%
	// designated women (Manufacturing) at once.
	one := e.path("one.csv")
	if err := os.WriteFile(one, []byte("Race,Gender,Grade\nW,M,F1\nA,M,C1\nA,F,C1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("profile", one, "-o", e.path("one.csv.xlsx"), "--as-of", "2026-10-01"); r.code != ExitOK {
		t.Fatalf("profile one: exit %d\n%s", r.code, r.err)
	}
	r := e.run("propose", "--profile", e.path("one.csv.xlsx"), "--sector", "Manufacturing", "--start", "2026-09-01", "--end", "2027-08-31",
		"--name", "One", "--company-vat", vatAcme, "-o", e.path("one-plan.xlsx"))
	if r.code != ExitDiff || !strings.Contains(r.err, "top_managers") || !strings.Contains(r.err, "at a headcount of 1") {
		t.Fatalf("unmeetable: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if _, err := os.Stat(e.path("one-plan.xlsx")); err != nil {
		t.Fatalf("the nearest plan was not written: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sector", "Nowhere"}, "not a sector"},
		{[]string{"--sector", "Manufacturing", "--start", "2024-09-01"}, "earliest start"},
		{[]string{"--sector", "Manufacturing", "--race-weights", "white=1"}, "designated races of men"},
		{[]string{"--sector", "Manufacturing", "--growth", "-3"}, "--growth"},
		{[]string{"--sector", "Manufacturing", "--layout", "grid", "-o", e.path("bad.csv")}, "a CSV file holds the flat layout"},
	} {
		bad := tc.args
		args := []string{"propose", "--profile", e.path("small.xlsx"), "--start", "2026-09-01", "--end", "2027-08-31",
			"--name", "Bad", "--company-vat", vatAcme, "--force"}
		if !slices.Contains(bad, "-o") {
			args = append(args, "-o", e.path("bad.xlsx"))
		}
		args = append(args, bad...)
		if r := e.run(args...); r.code != ExitInvalid || !strings.Contains(r.err, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", bad, r.code, tc.want, r.err)
		}
	}
}
