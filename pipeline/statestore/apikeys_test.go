package statestore

import (
	"context"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline/keyrotate"
)

// TestAPIKeyBook: a created key's id is found by service and key, a new
// record of the same key replaces the old, a revoked key is no longer
// found, and a store of schema 9 gains the table on opening (both
// backends).
func TestAPIKeyBook(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			where := loc(t)
			openAt(t, where, 9).Close()
			s := open(t, where)
			at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			if _, ok, err := s.KeyID(ctx, "https://svc", "mpk_a"); ok || err != nil {
				t.Fatalf("empty book: %v %v", ok, err)
			}
			c := keyrotate.Created{ID: 7, Pair: keyrotate.Pair{Key: "mpk_a", Secret: "never stored"}, ExpiresAt: "2027-02-22T10:00:00Z"}
			if err := s.RecordKey(ctx, "https://svc", "acme", c, at); err != nil {
				t.Fatal(err)
			}
			c.ID = 8
			if err := s.RecordKey(ctx, "https://svc", "acme", keyrotate.Created{ID: 8, Pair: keyrotate.Pair{Key: "mpk_a"}}, at); err != nil {
				t.Fatal(err)
			}
			if id, ok, err := s.KeyID(ctx, "https://svc", "mpk_a"); id != 8 || !ok || err != nil {
				t.Fatalf("KeyID = %d %v %v, want 8", id, ok, err)
			}
			if _, ok, _ := s.KeyID(ctx, "https://other", "mpk_a"); ok {
				t.Error("another service's key found")
			}
			if err := s.RecordRevoked(ctx, "https://svc", "mpk_a", at.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.KeyID(ctx, "https://svc", "mpk_a"); ok || err != nil {
				t.Errorf("revoked key found: %v %v", ok, err)
			}
			var n int
			if err := s.db.QueryRow(`SELECT COUNT(*) FROM eepipe_api_keys WHERE api_key LIKE '%never%' OR account LIKE '%never%'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("a secret stored: %d %v", n, err)
			}
		})
	}
}
