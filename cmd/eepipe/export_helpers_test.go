package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
)

// exEnv is a sandbox on 127.0.0.1 with the example fixtures and the
// environment of a single-account (acme) run with the company lookup.
type exEnv struct {
	t    testing.TB
	srv  *sandbox.Server
	dir  string
	env  map[string]string
	acme *apiclient.Client
	now  time.Time
}

// Fixture identities (testdata/sandbox-fixtures.json).
const (
	exAcmeVAT      = "4012345678"
	exAcmeReg      = "2009/012345/07"
	exBluecraneVAT = "4098765432"
)

func newExEnv(t testing.TB, fx *sandbox.Fixtures) *exEnv {
	t.Helper()
	if fx == nil {
		fx = sandbox.DefaultFixtures()
	}
	srv, err := sandbox.Start("127.0.0.1:0", sandbox.Options{Fixtures: fx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e := &exEnv{t: t, srv: srv, dir: t.TempDir(), now: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
	e.env = map[string]string{
		envBaseURL: srv.URL, envAPIKey: "mpk_sandbox_acme", envAPISecret: "sandbox-secret-acme",
		envLookupURL: srv.URL, envLookupUsername: "consultant", envLookupPassword: "sandbox-lookup-pass",
		envLockDir: filepath.Join(e.dir, "locks"),
	}
	e.acme = e.client("mpk_sandbox_acme", "sandbox-secret-acme")
	return e
}

func (e *exEnv) client(key, secret string) *apiclient.Client {
	c, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: key, APISecret: secret})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// run executes eepipe in-process and returns the exit code, stdout and stderr.
func (e *exEnv) run(args ...string) (int, string, string) {
	return e.runCtx(context.Background(), args...)
}

func (e *exEnv) runCtx(ctx context.Context, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:    func() time.Time { return e.now },
		Getenv: testGetenv(e.dir, e.env),
	}
	code := Execute(ctx, f, args)
	return code, out.String(), errOut.String()
}

func (e *exEnv) path(name string) string { return filepath.Join(e.dir, name) }

// exCounters returns deterministic, consistent counters for a target:
// every counter set, the totals the sums of their parts, and the disabled
// employees target a small share of the all-employees one.
func exCounters(seed int64, disabled bool) map[string]int64 {
	m := map[string]int64{}
	for ri, race := range pipeline.Races {
		for gi, gender := range pipeline.Genders {
			var perm int64
			for li, level := range pipeline.OccupationalLevels {
				v := (seed*31+int64(ri*17+gi*7+li*5))%23 + 1
				if disabled {
					v = v / 8
				}
				m[pipeline.CounterName(race, gender, level)] = v
				perm += v
			}
			temp := (seed + int64(ri+gi)) % 5
			if disabled {
				temp = 0
			}
			m[pipeline.CounterName(race, gender, "total_permanent_employees")] = perm
			m[pipeline.CounterName(race, gender, "temporary_employees")] = temp
			m[pipeline.CounterName(race, gender, "grand_total_employees")] = perm + temp
		}
	}
	return m
}

// createPlans creates n plans on c, each with every counter of every target
// set, and returns them as stored.
func (e *exEnv) createPlans(c *apiclient.Client, prefix string, n int) []*apiclient.Plan {
	e.t.Helper()
	ctx := context.Background()
	sectors := pipeline.Sectors
	out := make([]*apiclient.Plan, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := fmt.Sprintf("%d-09-01", 2025+i%3)
			pc := apiclient.PlanCreate{Name: fmt.Sprintf("%s plan %03d", prefix, i+1), StartDate: start, EndDate: "2030-08-31"}
			if i%2 == 0 {
				pc.Sector = sectors[i%len(sectors)]
			}
			p, err := c.CreatePlan(ctx, pc)
			if err != nil {
				errs <- err
				return
			}
			for _, m := range p.Milestones {
				for _, t := range m.Targets {
					if _, err := c.UpdateTarget(ctx, p.ID, m.ID, t.ID, exCounters(int64(i*100+m.YearNumber*3), t.TargetType == pipeline.TargetDisabled)); err != nil {
						errs <- err
						return
					}
				}
			}
			full, err := c.GetPlan(ctx, p.ID)
			if err != nil {
				errs <- err
				return
			}
			out[i] = full
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
	return out
}

// exTargetKey identifies a target across the file and the server.
type exTargetKey struct {
	plan int64
	year int
	typ  string
}

// serverState returns every counter of every plan of an account, as the
// sandbox stores it.
func (e *exEnv) serverState(account string) (map[exTargetKey]map[string]int64, map[int64]apiclient.Plan) {
	targets := map[exTargetKey]map[string]int64{}
	plans := map[int64]apiclient.Plan{}
	for _, p := range e.srv.Sandbox.Plans(account) {
		plans[p.ID] = p
		for _, m := range p.Milestones {
			for _, t := range m.Targets {
				targets[exTargetKey{p.ID, m.YearNumber, t.TargetType}] = maps.Clone(t.Counters)
			}
		}
	}
	return targets, plans
}

// fileState reads a file back with the readers and returns its targets.
func fileState(t testing.TB, path string) (*pipeline.Batch, map[exTargetKey]map[string]int64) {
	t.Helper()
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if batch.Problems.HasErrors() {
		var msgs []string
		for _, p := range batch.Problems {
			msgs = append(msgs, p.String())
		}
		t.Fatalf("re-reading %s: %d problems:\n%s", filepath.Base(path), len(msgs), strings.Join(msgs[:min(len(msgs), 10)], "\n"))
	}
	out := map[exTargetKey]map[string]int64{}
	for _, p := range batch.Plans {
		for _, tg := range p.Targets {
			n, ok := tg.Year(p.StartDate)
			if !ok {
				t.Fatalf("%s: target without a year", tg.Origin)
			}
			out[exTargetKey{p.PlanID, n, tg.TargetType}] = tg.Counters
		}
	}
	return batch, out
}

// diffStates describes how two target maps differ ("" when equal).
func diffStates(want, got map[exTargetKey]map[string]int64) string {
	var b strings.Builder
	keys := slices.Collect(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, c exTargetKey) int {
		if a.plan != c.plan {
			return int(a.plan - c.plan)
		}
		if a.year != c.year {
			return a.year - c.year
		}
		return strings.Compare(a.typ, c.typ)
	})
	for _, k := range keys {
		w, g := want[k], got[k]
		if w == nil || g == nil {
			fmt.Fprintf(&b, "%v: only in one (want %v, got %v)\n", k, w != nil, g != nil)
			continue
		}
		if !maps.Equal(w, g) {
			for n, v := range w {
				if g[n] != v {
					fmt.Fprintf(&b, "%v %s: want %d, got %d\n", k, n, v, g[n])
				}
			}
			for n := range g {
				if _, ok := w[n]; !ok {
					fmt.Fprintf(&b, "%v %s: extra in file\n", k, n)
				}
			}
		}
		if b.Len() > 2000 {
			break
		}
	}
	return b.String()
}

func exReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
