package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// TestVersionFlagAndCommand: --version on the root command and `eepipe
// version` print the same line, from the binary itself.
func TestVersionFlagAndCommand(t *testing.T) {
	var lines []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), envRunMain+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if !strings.HasPrefix(string(out), "eepipe ") || strings.Count(string(out), "\n") != 1 {
			t.Errorf("%v printed %q, want one line eepipe VERSION", args, out)
		}
		lines = append(lines, string(out))
	}
	if lines[0] != lines[1] {
		t.Errorf("--version printed %q, version %q", lines[0], lines[1])
	}
	bi, _ := debug.ReadBuildInfo()
	if want := "eepipe " + versionFrom("", bi) + "\n"; lines[0] != want {
		t.Errorf("printed %q, want %q (from the binary's build info)", lines[0], want)
	}
}

// TestVersionFrom: the module version, the VCS revision and time from the
// build info; "dev" only when nothing is known.
func TestVersionFrom(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "1f853e9a0b"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}}
	for _, tc := range []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"nothing known", "", nil, "dev"},
		{"a source build without VCS", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"a module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"a source build with VCS", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "dev (revision 1f853e9a0b, 2026-11-30T10:00:00Z)"},
		{"with local changes", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130100000-1f853e9a0b12+dirty"},
			Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"v0.0.0-20261130100000-1f853e9a0b12+dirty (revision 1f853e9a0b, 2026-11-30T10:00:00Z, with local changes)"},
		{"-ldflags wins", "2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs}, "2.0.0 (revision 1f853e9a0b, 2026-11-30T10:00:00Z)"},
	} {
		if got := versionFrom(tc.ldflags, tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUsageLineNamesTheCommandOnce: a usage error of the root command
// points at "eepipe --help", not "eepipe eepipe --help".
func TestUsageLineNamesTheCommandOnce(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "(eepipe --help explains it)"},
		{[]string{"diff", "--bogus"}, "(eepipe diff --help explains it)"},
	} {
		r := e.run(append([]string{"--log-format", "console"}, tc.args...)...)
		if r.code != ExitInvalid || !strings.Contains(r.err, tc.want) || strings.Contains(r.err, "eepipe eepipe") {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", tc.args, r.code, tc.want, r.err)
		}
	}
}

// TestConfigDiscovery: --config, then EEPIPE_CONFIG, then
// $XDG_CONFIG_HOME/eepipe/config.yaml, then ~/.config/eepipe/config.yaml;
// --debug says which file was read.
func TestConfigDiscovery(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatCrane, name: "Found Plan", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	xdg := filepath.Join(e.dir, "xdg", "eepipe", "config.yaml")
	home := filepath.Join(e.dir, "home", ".config", "eepipe", "config.yaml")
	for _, p := range []string{xdg, home} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, string(cfg), 0o600)
	}
	missing := filepath.Join(e.dir, "missing.yaml")
	for _, tc := range []struct {
		name       string
		vars       map[string]string
		args       []string
		code       int
		want, from string
	}{
		{"--config over EEPIPE_CONFIG", map[string]string{envConfig: missing}, []string{"--config", e.config}, ExitDiff, e.config, `"from":"--config"`},
		{"EEPIPE_CONFIG", map[string]string{envConfig: e.config, "XDG_CONFIG_HOME": filepath.Join(e.dir, "xdg")}, nil, ExitDiff, e.config, `"from":"EEPIPE_CONFIG"`},
		{"EEPIPE_CONFIG missing", map[string]string{envConfig: missing}, nil, ExitInvalid, "configuration (from EEPIPE_CONFIG): ", ""},
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": filepath.Join(e.dir, "xdg"), "HOME": filepath.Join(e.dir, "home")}, nil, ExitDiff, xdg, `"from":"the default file"`},
		{"HOME", map[string]string{"HOME": filepath.Join(e.dir, "home")}, nil, ExitDiff, home, `"from":"the default file"`},
		{"none", map[string]string{"HOME": filepath.Join(e.dir, "nobody")}, nil, ExitInvalid, "no configuration file (no --config, no EEPIPE_CONFIG, and no " + filepath.Join(e.dir, "nobody", ".config", "eepipe", "config.yaml") + ")", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.vars {
				e.vars[k] = v
			}
			defer func() {
				for k := range tc.vars {
					delete(e.vars, k)
				}
			}()
			r := e.run(append(append([]string{"--debug"}, tc.args...), "diff", file)...)
			if r.code != tc.code || !strings.Contains(r.err, tc.want) || !strings.Contains(r.err, tc.from) {
				t.Errorf("exit %d, want %d, stderr with %q and %q\n%s%s", r.code, tc.code, tc.want, tc.from, r.out, r.err)
			}
			if tc.code == ExitDiff && !strings.Contains(r.out, "account bluecrane") {
				t.Errorf("the plan was not routed with the file's accounts:\n%s", r.out)
			}
		})
	}
}

// TestSandboxWritesConfig: sandbox --write-config writes a configuration
// of every fixture account that routes plans of two companies, its
// secrets in files of their own (mode 0600), none in the file itself.
func TestSandboxWritesConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox.yaml")
	url, stop, _ := runSandboxCmd(t, "sandbox", "--listen", "127.0.0.1:0", "--write-config", path)
	defer stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fx := sandbox.DefaultFixtures()
	for _, secret := range []string{fx.Accounts[0].Secret, fx.Accounts[1].Secret, fx.LookupUsers[0].Password} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the configuration holds a secret inline:\n%s", b)
		}
	}
	for _, want := range []string{"base_url: " + url, "api_secret_file: sandbox-secrets/1-acme.secret", "company_id: Q2wE9z", `vat_number: "` + vatCrane + `"`, "password_file: sandbox-secrets/lookup.password"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the configuration lacks %q:\n%s", want, b)
		}
	}
	for _, p := range []string{path, filepath.Join(dir, "sandbox-secrets", "1-acme.secret"), filepath.Join(dir, "sandbox-secrets", "lookup.password")} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", p, err, st)
		}
	}
	csv := writeCSV(t, filepath.Join(dir, "two.csv"), []row{
		{vat: vatAcme, name: "Acme Routed", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatCrane, name: "Crane Routed", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 2)},
	})
	r := (&env{t: t, dir: dir, vars: map[string]string{}}).run("--config", path, "diff", csv)
	// The warnings expected: this new configuration has no run history
	// yet, and the summary of a diff with differences is logged at warn.
	var warned []string
	for _, line := range strings.Split(r.err, "\n") {
		if strings.Contains(line, `"level":"warn"`) && !strings.Contains(line, "there is no state store") && !strings.Contains(line, `"msg":"summary"`) {
			warned = append(warned, line)
		}
	}
	if r.code != ExitDiff || !strings.Contains(r.out, "account acme") || !strings.Contains(r.out, "account bluecrane") || len(warned) > 0 {
		t.Errorf("diff with the written configuration: exit %d, want 1, both accounts and no warning but the store's\n%s%s", r.code, r.out, r.err)
	}
}

// TestJSONOnStdout: validate, diff, reconcile, check and history --json
// write on stdout the document their --report FILE.json writes, and
// nothing else there; the logs (--debug too) stay on stderr.
func TestJSONOnStdout(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: "JSON Plan", start: "2025-09-01", end: "2030-08-31", sector: "Manufacturing", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	if r := e.run("apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	rows := []row{{vat: vatAcme, name: "JSON Plan", start: "2025-09-01", end: "2030-08-31", sector: "Manufacturing", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 2)}}
	writeCSV(t, file, rows)
	for _, tc := range []struct {
		args []string
		code int
		key  string // a key of the document
	}{
		{[]string{"validate", file}, 0, `"warnings"`},
		{[]string{"diff", file}, ExitDiff, `"dry_run": true`},
		{[]string{"reconcile", file}, ExitDiff, `"in_sync": false`},
		{[]string{"check", file}, ExitDiff, `"targets_source"`},
		{[]string{"history"}, 0, `"schema": "eepipe.history/`},
	} {
		report := filepath.Join(e.dir, tc.args[0]+".json")
		r := e.run(append([]string{"--debug"}, append(tc.args, "--json", "--report", report)...)...)
		if r.code != tc.code {
			t.Errorf("%v --json: exit %d, want %d\n%s", tc.args, r.code, tc.code, r.err)
			continue
		}
		if !json.Valid([]byte(r.out)) || !strings.Contains(r.out, tc.key) {
			t.Errorf("%v --json: stdout is not the JSON document alone (want %s):\n%s", tc.args, tc.key, r.out)
		}
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != r.out {
			t.Errorf("%v --json: stdout differs from --report %s:\n%s\n---\n%s", tc.args, report, r.out, b)
		}
		if tc.args[0] == "diff" && !strings.Contains(r.err, `"level":"debug"`) {
			t.Errorf("%v --json --debug: no debug log on stderr:\n%s", tc.args, r.err)
		}
	}
}

// TestOverviewCompanyAndLinks: with an account that names its company's
// VAT number (as sandbox --write-config writes it), the export's Overview
// fills Company, VAT and registration from the lookup; with company_id
// alone (the lookup cannot be searched by id) the export says so. The
// Sheet column is as wide as its longest sheet name, so no link is cut.
func TestOverviewCompanyAndLinks(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	const long = "Acme Foods EE Plan 2025-2030"
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: long, start: "2025-09-01", end: "2030-08-31", sector: "Manufacturing", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	if r := e.run("--config", e.config, "apply", file, "--no-recalc"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.err)
	}
	out := filepath.Join(e.dir, "only-id.xlsx")
	r := e.run("--config", e.config, "export", "-o", out)
	if r.code != 0 || !strings.Contains(r.err, "account acme names only its company_id (8ovHrj)") {
		t.Errorf("export with company_id only: exit %d, want 0 and the warning\n%s", r.code, r.err)
	}
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	withVAT := filepath.Join(e.dir, "vat.yaml")
	writeFile(t, withVAT, strings.Replace(string(cfg), "    company_id: 8ovHrj\n", "    company_id: 8ovHrj\n    vat_number: \""+vatAcme+"\"\n", 1), 0o600)
	out = filepath.Join(e.dir, "vat.xlsx")
	if r := e.run("--config", withVAT, "export", "-o", out); r.code != 0 || strings.Contains(r.err, "acme names only") {
		t.Fatalf("export with vat_number: exit %d\n%s", r.code, r.err)
	}
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, err := wb.GetRows("Overview")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows {
		if len(row) > 5 && row[0] == long {
			got = row[3:6]
		}
	}
	if want := []string{"Acme Foods (Pty) Ltd", vatAcme, "2009/012345/07"}; !slices.Equal(got, want) {
		t.Errorf("Overview row of %s: Company, VAT, registration %q, want %q", long, got, want)
	}
	if w, err := wb.GetColWidth("Overview", "A"); err != nil || w < 1.1*float64(len(long)) {
		t.Errorf("the Sheet column is %.1f wide (%v): %q is cut", w, err, long)
	}
}

// TestCouldNotCompareSaysSo: when a plan could not be compared (no
// configured account for its company), diff and reconcile say "1 plan
// could not be compared" and exit 1, not "done, with differences".
func TestCouldNotCompareSaysSo(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	acmeOnly := filepath.Join(e.dir, "acme.yaml")
	writeFile(t, acmeOnly, string(cfg[:strings.Index(string(cfg), "  - name: bluecrane")]), 0o600)
	file := writeCSV(t, filepath.Join(e.dir, "p.csv"), []row{
		{vat: vatAcme, name: "Compared", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
		{vat: vatCrane, name: "Not Compared", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)},
	})
	for _, cmd := range []string{"diff", "reconcile"} {
		r := e.run("--log-format", "console", "--config", acmeOnly, cmd, file)
		last := lastLine(r.err)
		if r.code != ExitDiff || !strings.HasPrefix(last, "eepipe "+cmd+": 1 plan could not be compared in ") || strings.Contains(last, "done") {
			t.Errorf("%s: exit %d, last line %q; want 1 and the plan that could not be compared\n%s%s", cmd, r.code, last, r.out, r.err)
		}
	}
	if r := e.run("--config", acmeOnly, "diff", file); !strings.Contains(r.out, "1 plan could not be compared (the reasons are above)") ||
		summaryLine(t, r.err)["plans_not_compared"] != 1.0 {
		t.Errorf("diff: the change set or the summary event does not count the plan not compared\n%s%s", r.out, r.err)
	}
	// All compared: the words stay those of differences.
	writeCSV(t, file, []row{{vat: vatAcme, name: "Compared", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	if r := e.run("--log-format", "console", "--config", acmeOnly, "diff", file); !strings.Contains(lastLine(r.err), "done, with differences") {
		t.Errorf("diff with every plan compared: %q", lastLine(r.err))
	}
}

// TestValidateVerboseListsEveryProblem: validate prints the first
// problems of each kind and counts the rest; -v lists every one.
func TestValidateVerboseListsEveryProblem(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	var b strings.Builder
	b.WriteString("company_vat_number,plan_name,start_date,end_date,year_number,target_type," + cAMT + "\n")
	for i := range 8 {
		fmt.Fprintf(&b, "%s,Plan %d,2025-09-01,2030-08-31,1,all_employees,-%d\n", vatAcme, i, i+1)
	}
	file := filepath.Join(e.dir, "bad.csv")
	writeFile(t, file, b.String(), 0o600)
	brief, all := e.run("validate", file), e.run("validate", file, "-v")
	if brief.code != ExitInvalid || all.code != ExitInvalid {
		t.Fatalf("validate: exit %d and %d, want 2\n%s%s", brief.code, all.code, brief.out, all.out)
	}
	if n := strings.Count(brief.out, "error: "); n >= 8 || !strings.Contains(brief.out, "… and ") {
		t.Errorf("validate lists %d of 8 errors, want the first ones and a count of the rest:\n%s", n, brief.out)
	}
	if n := strings.Count(all.out, "error: "); n != 8 || strings.Contains(all.out, "… and ") {
		t.Errorf("validate -v lists %d of 8 errors, want every one:\n%s", n, all.out)
	}
}
