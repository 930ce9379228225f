package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eepipe/eepipe/formats/table"
)

// TestOutputFolderCheckedFirst: every command that writes a file refuses
// an output whose folder does not exist before any work (exit 2, naming
// the flag and the folder), without a request to the service and without
// naming a temporary file.
func TestOutputFolderCheckedFirst(t *testing.T) {
	e := newCkEnv(t)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	e.vars["EEPIPE_BASE_URL"] = srv.URL
	plans := e.path("plans.csv")
	if err := table.WriteFlatCSV(plans, ckPlans(t), nil); err != nil {
		t.Fatal(err)
	}
	grid := e.path("grid.xlsx")
	if r := e.run("template", "-o", grid); r.code != ExitOK {
		t.Fatalf("template: %d %s", r.code, r.err)
	}
	missing := filepath.Join(e.dir, "no-such-folder")
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--report", []string{"validate", plans, "--report", filepath.Join(missing, "p.csv")}},
		{"--annotate", []string{"validate", grid, "--annotate", filepath.Join(missing, "a.xlsx")}},
		{"--report", []string{"reconcile", plans, "--report", e.path("ok.json"), "--report", filepath.Join(missing, "r.xlsx")}},
		{"--report", []string{"check", plans, "--report", filepath.Join(missing, "c.xlsx")}},
		{"--report", []string{"history", "--report", filepath.Join(missing, "h.json")}},
		{"--report", []string{"apply", plans, "--report", filepath.Join(missing, "run.json")}},
		{"-o", []string{"diff", plans, "-o", filepath.Join(missing, "cs.json")}},
		{"-o", []string{"export", "-o", filepath.Join(missing, "x.xlsx")}},
		{"-o", []string{"template", "-o", filepath.Join(missing, "t.xlsx")}},
		{"--write-env", []string{"sandbox", "--listen", "127.0.0.1:0", "--write-env", filepath.Join(missing, "env.sh")}},
	} {
		t.Run(strings.Join(tc.args[:1], " ")+" "+tc.flag, func(t *testing.T) {
			before := requests.Load()
			r := e.run(tc.args...)
			if r.code != ExitInvalid || !strings.Contains(r.err, tc.flag+" ") || !strings.Contains(r.err, "the folder "+missing+" does not exist") ||
				strings.Contains(r.err, ".tmp") {
				t.Errorf("exit %d, want 2 naming %s and the folder:\n%s", r.code, tc.flag, r.err)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("%d requests sent before the refusal", n)
			}
		})
	}
}
