package main

import (
	"testing"
)

// BenchmarkCostGridRoundTrip3000 exports an account of 3,000 plans as a
// grid workbook (with its charts and the Sector targets sheet), then
// reconciles that file and applies it (with the default SQLite state
// store, twice, and with --no-state): each must exit 0 and the applies
// write nothing to the service; the bounds are less time than the
// export took and under 400 MB. Each step reports its wall time
// (ms/op), CPU time (cpu-ms/op) and peak resident memory (rss-MB) as a
// process of its own:
//
//	go test ./cmd/eepipe -run '^$' -bench CostGridRoundTrip3000 -benchtime 1x -timeout 60m
//
// The set-up creates the 3,000 plans through the API (about 30,000
// requests) first.
func BenchmarkCostGridRoundTrip3000(b *testing.B) {
	const plans = 3000
	e := newExEnv(b, nil)
	e.env[envState] = e.path("state.db")
	e.createPlans(e.acme, "Bench", plans)
	file := e.path("plans.xlsx")
	b.Run("export", func(b *testing.B) {
		costCommand(b, e, exitZero, "export", "-o", file, "--layout", "grid")
	})
	b.Run("reconcile", func(b *testing.B) {
		costCommand(b, e, exitZero, "reconcile", file)
	})
	// apply records every counter in sync in the state store (a first
	// apply, then again); apply --no-state is the same apply without it.
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"apply", []string{"apply", file}},
		{"reapply", []string{"apply", file}},
		{"apply-no-state", []string{"apply", "--no-state", file}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e.srv.Sandbox.ResetStats()
			costCommand(b, e, exitZero, bc.args...)
			if st := e.srv.Sandbox.Stats(); st.Writes != 0 {
				b.Fatalf("%v wrote %d times", bc.args, st.Writes)
			}
		})
	}
}
