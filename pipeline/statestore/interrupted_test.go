package statestore

import (
	"context"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// TestBeginRunInterruptsRunsThatHeldItsLocks: a run still recorded as
// running (killed) is recorded as interrupted when a later run of the
// same service begins with one of its accounts (however the account is
// spelled: the caller holds that account's lock); a run of another
// account or service, or one that recorded its end, is left as it is.
// A run wrongly taken for interrupted still records its own end.
func TestBeginRunInterruptsRunsThatHeldItsLocks(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			begin := func(service string, accounts ...string) int64 {
				t.Helper()
				id, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0, User: "ann", Host: "lap", Service: service, Accounts: accounts})
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			status := func() map[int64]string {
				t.Helper()
				runs, err := s.Runs(ctx, pipeline.HistoryQuery{})
				if err != nil {
					t.Fatal(err)
				}
				out := map[int64]string{}
				for _, r := range runs {
					out[r.ID] = r.Status
				}
				return out
			}
			killed := begin("https://svc", "acme", "crane")
			otherAccount := begin("https://svc", "zenith")
			otherService := begin("https://other", "acme")
			done := begin("https://svc", "acme")
			// done (acme, https://svc) interrupts killed alone.
			if err := s.FinishRun(ctx, done, "ok", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			got := status()
			want := map[int64]string{killed: pipeline.RunInterrupted, otherAccount: pipeline.RunRunning,
				otherService: pipeline.RunRunning, done: "ok"}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("run %d is %q, want %q (all: %v)", id, got[id], w, got)
				}
			}
			// Another spelling of crane; the run it interrupts then
			// records its end after all.
			later := begin("https://svc", "  CRANE ")
			if got := status(); got[later] != pipeline.RunRunning || got[otherAccount] != pipeline.RunRunning {
				t.Errorf("after a run of crane: %v", got)
			}
			wrong := begin("https://svc", "zenith")
			if got := status(); got[otherAccount] != pipeline.RunInterrupted {
				t.Errorf("a run of zenith did not interrupt the earlier one: %v", got)
			}
			if err := s.FinishRun(ctx, otherAccount, "ok", t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if got := status(); got[otherAccount] != "ok" || got[wrong] != pipeline.RunRunning {
				t.Errorf("a run that records its end after being taken for interrupted: %v", got)
			}
		})
	}
}
