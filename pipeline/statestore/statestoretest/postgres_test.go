package statestoretest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records how PostgresURL ends a test without a server.
type fakeTB struct{ skipped, failed string }

func (f *fakeTB) Helper()        {}
func (f *fakeTB) Cleanup(func()) {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestPostgresURLWithoutServer: without a server the PostgreSQL tests skip
// with a message; in CI they fail, unless .ci/postgres.sh said why it
// could not provide one (not root to install it ...): then they skip
// with that reason.
func TestPostgresURLWithoutServer(t *testing.T) {
	run := func(env map[string]string) *fakeTB {
		for k, v := range env {
			t.Setenv(k, v)
		}
		f := &fakeTB{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			PostgresURL(f)
		}()
		<-done
		return f
	}
	t.Setenv(PostgresEnv, "")
	if f := run(map[string]string{"CI": "", PostgresSkipEnv: ""}); f.skipped == "" || f.failed != "" {
		t.Errorf("outside CI: skipped %q, failed %q; want a skip", f.skipped, f.failed)
	}
	if f := run(map[string]string{"CI": "true", PostgresSkipEnv: ""}); f.failed == "" {
		t.Errorf("in CI without a reason: skipped %q; want a failure", f.skipped)
	}
	why := "this user (ci) is not root and has no password-less sudo"
	if f := run(map[string]string{"CI": "true", PostgresSkipEnv: why}); f.failed != "" || !strings.Contains(f.skipped, why) {
		t.Errorf("in CI with a reason: skipped %q, failed %q; want a skip naming the reason", f.skipped, f.failed)
	}
}
