package main

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestLockWaitShared: --lock-wait is read whether the state flags
// registered it or another part of apply did.
func TestLockWaitShared(t *testing.T) {
	for _, pre := range []bool{false, true} {
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		var other time.Duration
		if pre {
			cmd.Flags().DurationVar(&other, "lock-wait", 0, "")
		}
		var sf stateFlags
		sf.register(cmd, true, true)
		cmd.SetArgs([]string{"--lock-wait", "3s"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got := sf.lockWait(); got != 3*time.Second {
			t.Errorf("pre-registered %v: lockWait = %s, want 3s", pre, got)
		}
	}
}
