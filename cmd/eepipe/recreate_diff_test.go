package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// TestDiffSaysWhatRecreateDoes: diff --recreate-on-date-change says what
// apply --recreate-on-date-change then does against the sandbox, in the
// same words: a plain recreate creates one plan and deletes the old one;
// with a plan left by an earlier recreate that did not finish (the new
// name and dates, another id) diff says that plan will be adopted, not
// created again, and apply adopts it and creates nothing, with counts
// that agree; with two such plans both fail with the same reason and
// nothing is written.
func TestDiffSaysWhatRecreateDoes(t *testing.T) {
	const routeDelete = "DELETE /api/public/v1/employment_equity_plans/{id}"
	leave := func(t *testing.T, e *env, n int) []int64 {
		t.Helper()
		c, err := apiclient.New(apiclient.Options{BaseURL: e.srv.URL, APIKey: "mpk_sandbox_acme", APISecret: "sandbox-secret-acme"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for range n {
			p, err := c.CreatePlan(context.Background(), apiclient.PlanCreate{Name: "Window", StartDate: "2026-09-01", EndDate: "2030-08-31"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		return ids
	}
	counts := func(t *testing.T, re *regexp.Regexp, s string) string {
		t.Helper()
		m := re.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("no summary matching %s in\n%s", re, s)
		}
		return strings.Join(m[1:], " ")
	}
	diffSummary := regexp.MustCompile(`Plan: (\d+) to create, (\d+) to update, (\d+) to recreate, (\d+) unchanged, (\d+) failed; (\d+) targets? to patch, (\d+) counters? to change`)
	applySummary := regexp.MustCompile(`Applied: plans (\d+) created, (\d+) updated, (\d+) recreated, (\d+) unchanged, (\d+) failed, \d+ not applied; (\d+) targets? patched, (\d+) counters? changed`)

	for _, tc := range []struct {
		name      string
		leftovers int
		creates   int64
		deletes   int64
		code      int
	}{
		{"recreate", 0, 1, 1, 0},
		{"one plan left by an earlier recreate", 1, 0, 1, 0},
		{"two plans left by earlier recreates", 2, 0, 0, ExitDiff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sandbox.Options{})
			e.singleAccount()
			file, old := recreateSetup(t, e)
			left := leave(t, e, tc.leftovers)

			e.srv.Sandbox.ResetStats()
			d := e.run("diff", file, "--recreate-on-date-change")
			if d.code != ExitDiff || e.srv.Sandbox.Stats().Writes != 0 {
				t.Fatalf("diff: exit %d, %d writes\n%s%s", d.code, e.srv.Sandbox.Stats().Writes, d.out, d.err)
			}
			e.srv.Sandbox.ResetStats()
			a := e.run("apply", file, "--recreate-on-date-change", "--no-recalc")
			if a.code != tc.code {
				t.Fatalf("apply: exit %d, want %d\n%s", a.code, tc.code, a.err)
			}
			st := e.srv.Sandbox.Stats()
			if st.ByRoute[routeCreate] != tc.creates || st.ByRoute[routeDelete] != tc.deletes {
				t.Errorf("apply sent %d creates and %d deletes, want %d and %d", st.ByRoute[routeCreate], st.ByRoute[routeDelete], tc.creates, tc.deletes)
			}
			if dc, ac := counts(t, diffSummary, d.out), counts(t, applySummary, a.err); dc != ac {
				t.Errorf("diff announced (create update recreate unchanged failed targets counters) %s, apply did %s\n%s\n%s", dc, ac, d.out, a.err)
			}

			switch tc.leftovers {
			case 0:
				if want := fmt.Sprintf("plan %d will be created again with the new dates and the old plan deleted", old); !strings.Contains(d.out, want) {
					t.Errorf("diff lacks %q:\n%s", want, d.out)
				}
				if strings.Contains(d.out, "adopted") || strings.Contains(a.err, "adopted") {
					t.Errorf("nothing to adopt, yet adoption is announced:\n%s\n%s", d.out, a.err)
				}
			case 1:
				said := fmt.Sprintf("plan %d with the new dates was left by an earlier recreate that did not finish; it will be adopted, not created again, and the old plan %d will be deleted", left[0], old)
				done := fmt.Sprintf("plan %d with the new dates was left by an earlier recreate that did not finish; it was adopted, not created again", left[0])
				if !strings.Contains(d.out, said) || strings.Contains(d.out, "will be created again") {
					t.Errorf("diff does not say it adopts plan %d:\n%s", left[0], d.out)
				}
				if !strings.Contains(a.err, done) || !strings.Contains(a.err, fmt.Sprintf("the old plan %d was deleted", old)) {
					t.Errorf("apply does not report the adoption:\n%s", a.err)
				}
				if plans := e.srv.Sandbox.Plans("acme"); len(plans) != 1 || plans[0].ID != left[0] {
					t.Errorf("after apply %d plans, want only the adopted plan %d", len(plans), left[0])
				}
			case 2:
				reason := fmt.Sprintf("plans %d, %d already have the new name and dates of plan %d (left by earlier recreates); delete all but one of them, then run again", left[0], left[1], old)
				if !strings.Contains(d.out, "! failed plan") || !strings.Contains(d.out, reason) {
					t.Errorf("diff lacks the failure %q:\n%s", reason, d.out)
				}
				if !strings.Contains(a.err, reason) || st.Writes != 0 {
					t.Errorf("apply (%d writes) lacks the failure %q:\n%s", st.Writes, reason, a.err)
				}
			}
		})
	}
}
