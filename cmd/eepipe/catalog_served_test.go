package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Counter names the renaming proxy swaps: the service behind it serves a
// catalog that differs from the built-in 90 counters.
const (
	builtinCounter = "number_of_foreign_female_grand_total_employees"
	servedCounter  = "number_of_foreign_female_grand_total_staff"
)

// renamingProxy serves the sandbox's API with one counter renamed in every
// answer (requests pass unchanged: their bodies are signed), as a service
// with another counter catalog would.
func renamingProxy(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(builtinCounter), []byte(servedCounter))
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		r.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCatalogComesFromTheService: an export from a service whose
// counter catalog differs from the built-in one applies, diffs and
// reconciles without --catalog (the catalog is learnt from the keys of a
// target the service returns); a file counter the service lacks is an
// error naming its column, and nothing is sent; --catalog still overrides.
func TestCatalogComesFromTheService(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 1)
	e.env[envBaseURL] = renamingProxy(t, e.srv.URL)

	out := e.path("served.csv")
	if code, _, stderr := e.run("export", "-o", out); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(string(b), "\n", 2)[0]
	if !strings.Contains(header, servedCounter) || strings.Contains(header, builtinCounter) {
		t.Fatalf("the export does not carry the served catalog: %s", header)
	}

	e.srv.Sandbox.ResetStats()
	if code, stdout, stderr := e.run("apply", out); code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
		t.Fatalf("apply without --catalog: exit %d, %d writes\n%s\n%s", code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
	}
	if code, stdout, stderr := e.run("diff", out); code != 0 {
		t.Fatalf("diff without --catalog: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := e.run("reconcile", out); code != 0 {
		t.Fatalf("reconcile without --catalog: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Every layout re-imports the same way.
	for _, name := range []string{"served.xlsx", "served-flat.xlsx", "served-long.csv"} {
		layout := map[string]string{"served.xlsx": "grid", "served-flat.xlsx": "flat", "served-long.csv": "long"}[name]
		path := e.path(name)
		if code, _, stderr := e.run("export", "-o", path, "--layout", layout, "--no-charts"); code != 0 {
			t.Fatalf("export %s: exit %d\n%s", name, code, stderr)
		}
		e.srv.Sandbox.ResetStats()
		if code, stdout, stderr := e.run("apply", path); code != 0 || e.srv.Sandbox.Stats().Writes != 0 {
			t.Errorf("apply %s without --catalog: exit %d, %d writes\n%s\n%s", name, code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
		}
	}

	// A file with the built-in counter the service lacks.
	lacking := e.path("lacking.csv")
	if err := os.WriteFile(lacking, []byte("plan_name,start_date,end_date,year_number,target_type,"+builtinCounter+"\n"+
		"New plan,2026-09-01,2030-08-31,1,all_employees,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Sandbox.ResetStats()
	code, _, stderr := e.run("apply", lacking)
	if code != ExitInvalid || !strings.Contains(stderr, "line 2, column 6 ("+builtinCounter+")") ||
		!strings.Contains(stderr, "is a counter the service does not have") || !strings.Contains(stderr, "nothing was sent") {
		t.Errorf("a counter the service lacks: exit %d\n%s", code, stderr)
	}
	if w := e.srv.Sandbox.Stats().Writes; w != 0 {
		t.Errorf("%d writes for a counter the service lacks", w)
	}

	// --catalog overrides: the built-in names, so the served counter is unknown.
	cat := e.path("builtin.txt")
	var names []string
	for _, line := range strings.Split(header, ",") {
		if strings.HasPrefix(line, "number_of_") && line != servedCounter {
			names = append(names, line)
		}
	}
	if err := os.WriteFile(cat, []byte(strings.Join(names, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Sandbox.ResetStats()
	code, _, stderr = e.run("--catalog", cat, "apply", out)
	if code != ExitInvalid || !strings.Contains(stderr, servedCounter) {
		t.Errorf("--catalog: exit %d\n%s", code, stderr)
	}
	if n := e.srv.Sandbox.Stats().Requests; n != 0 {
		t.Errorf("%d requests with --catalog and an unknown counter", n)
	}
}
