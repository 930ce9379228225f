package statestoretest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	// The PostgreSQL driver.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// PostgresEnv names the environment variable that gives tests a
// PostgreSQL server (a URL whose user may create databases); .ci/run sets
// it to a throwaway cluster.
const PostgresEnv = "EEPIPE_TEST_POSTGRES"

// PostgresSkipEnv names the environment variable by which .ci/postgres.sh
// says why it could not provide a server (not root to install it, no
// network to Debian's mirrors): the PostgreSQL tests then skip with that
// reason, also in CI.
const PostgresSkipEnv = "EEPIPE_TEST_POSTGRES_SKIP"

// TB is the part of testing.TB the test helpers use.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

var testDBSeq atomic.Int64

// PostgresURL returns the URL of a fresh, empty database on the test
// server (dropped when the test ends). Without a server the test is
// skipped with a message, except in CI (CI set), where it fails unless
// .ci/postgres.sh said why there is none (PostgresSkipEnv).
func PostgresURL(t TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		if why := os.Getenv(PostgresSkipEnv); why != "" {
			t.Skipf("no PostgreSQL server for the state store tests: %s", why)
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set in CI: .ci/run starts a PostgreSQL server and sets it", PostgresEnv)
		}
		t.Skipf("no PostgreSQL server for the state store tests: set %s (e.g. source .ci/postgres.sh && pg_start)", PostgresEnv)
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	defer db.Close()
	ctx := context.Background()
	name := fmt.Sprintf("eepipe_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000, testDBSeq.Add(1))
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating a test database on the %s server: %v", PostgresEnv, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err == nil {
			db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}
