package diff

import (
	"strings"
	"testing"
)

// TestMessagesSingularPlural: the held-changes heading and the reconcile
// summary say "1 counter ... it ... was" and "1 differs", never
// "counter(s)" or "1 differ".
func TestMessagesSingularPlural(t *testing.T) {
	held := func(n int, overwritten bool) string {
		var b strings.Builder
		if err := WriteHeld(&b, make([]HeldChange, n), overwritten, false); err != nil {
			t.Fatal(err)
		}
		return strings.SplitN(b.String(), "\n", 2)[0]
	}
	recon := func(differ int) string {
		var b strings.Builder
		r := &Reconciliation{Complete: true, Summary: ReconcileSummary{PlansInSync: 3, PlansDiffering: differ, CountersDiffering: differ}}
		if err := r.Render(&b); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(b.String())
	}
	for _, tc := range []struct{ got, want string }{
		{held(1, false), "1 counter changed on the service since eepipe last wrote it was NOT overwritten (run with --overwrite-service-changes to write the file's values anyway):"},
		{held(2, false), "2 counters changed on the service since eepipe last wrote them were NOT overwritten (run with --overwrite-service-changes to write the file's values anyway):"},
		{held(1, true), "1 counter changed on the service since eepipe last wrote it; overwritten (--overwrite-service-changes):"},
		{held(3, true), "3 counters changed on the service since eepipe last wrote them; overwritten (--overwrite-service-changes):"},
		{recon(1), "Reconcile: 3 in sync, 1 differs (0 fields, 1 counter), 0 missing on the service, 0 only on the service, 0 not compared."},
		{recon(2), "Reconcile: 3 in sync, 2 differ (0 fields, 2 counters), 0 missing on the service, 0 only on the service, 0 not compared."},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}
