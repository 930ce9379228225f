package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// TestReportNameOneRule: every command that writes a --report refuses a
// name whose extension names no report format, with the one wording and
// exit 2, before any request is sent.
func TestReportNameOneRule(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	file := writeCSV(t, filepath.Join(e.dir, "plans.csv"), []row{{vat: vatAcme, name: "X", start: "2025-09-01", end: "2030-08-31",
		year: 1, typ: pipeline.TargetAll, counters: counters(cAMT, 1)}})
	state := filepath.Join(e.dir, "state.db")
	commands := map[string]func(report string) []string{
		"apply":     func(r string) []string { return []string{"--config", e.config, "apply", file, "--report", r} },
		"check":     func(r string) []string { return []string{"--config", e.config, "check", file, "--report", r} },
		"history":   func(r string) []string { return []string{"history", "--state", state, "--report", r} },
		"reconcile": func(r string) []string { return []string{"--config", e.config, "reconcile", file, "--report", r} },
		"validate":  func(r string) []string { return []string{"--config", e.config, "validate", file, "--report", r} },
	}
	for _, name := range []string{"apply", "check", "history", "reconcile", "validate"} {
		for _, bad := range []string{filepath.Join(e.dir, "report.txt"), filepath.Join(e.dir, "report")} {
			t.Run(name+" "+filepath.Base(bad), func(t *testing.T) {
				e.srv.Sandbox.ResetStats()
				r := e.run(commands[name](bad)...)
				want := "--report " + bad + ": use a .xlsx, .csv or .json file name"
				if r.code != ExitInvalid || !strings.Contains(r.err, want) {
					t.Errorf("exit %d, want %d with %q\n%s%s", r.code, ExitInvalid, want, r.out, r.err)
				}
				if n := e.srv.Sandbox.Stats().Requests; n != 0 {
					t.Errorf("%d requests sent", n)
				}
			})
		}
	}
}
