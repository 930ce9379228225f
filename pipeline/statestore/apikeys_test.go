package statestore

import (
	"context"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
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
			if err := s.RecordKey(ctx, "https://svc", "acme", "mpk_web", c, at); err != nil {
				t.Fatal(err)
			}
			c.ID = 8
			if err := s.RecordKey(ctx, "https://svc", "acme", "mpk_web", keyrotate.Created{ID: 8, Pair: keyrotate.Pair{Key: "mpk_a"}}, at); err != nil {
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

// TestAPIKeyBookHandsOverHistory: a key created with a key pair whose run
// history is kept under an address takes that address over, so that a run
// with the new key through another address is refused as one with the old
// key is; a key created with a key pair without history gets none (both
// backends).
func TestAPIKeyBookHandsOverHistory(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			old, fresh := pipeline.AccountLockKey("mpk_old"), pipeline.AccountLockKey("mpk_new")
			if _, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0, User: "ann", Host: "lap", Command: "eepipe apply",
				Service: "http://127.0.0.1:8080", Keys: []string{old}}); err != nil {
				t.Fatal(err)
			}
			c := keyrotate.Created{ID: 9, Pair: keyrotate.Pair{Key: "mpk_new", Secret: "s"}}
			if err := s.RecordKey(ctx, "http://127.0.0.1:8080", "acme", "mpk_old", c, t0); err != nil {
				t.Fatal(err)
			}
			got, err := s.KeyServices(ctx, []string{old, fresh})
			if err != nil || got[fresh] != "http://127.0.0.1:8080" || got[old] != "http://127.0.0.1:8080" {
				t.Fatalf("key services after the rotation: %v (%v), want both under http://127.0.0.1:8080", got, err)
			}
			if _, err := s.BeginRun(ctx, pipeline.RunRecord{Started: t0.Add(time.Hour), User: "bob", Host: "cron", Command: "eepipe apply",
				Service: "http://localhost:8080", Keys: []string{fresh}}); err == nil {
				t.Fatal("a run with the new key through another address was recorded")
			}
			c2 := keyrotate.Created{ID: 10, Pair: keyrotate.Pair{Key: "mpk_other"}}
			if err := s.RecordKey(ctx, "http://127.0.0.1:8080", "crane", "mpk_unknown", c2, t0); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.KeyServices(ctx, []string{pipeline.AccountLockKey("mpk_other")}); len(got) != 0 {
				t.Errorf("a key created with a key pair without history got one: %v", got)
			}
		})
	}
}

// TestAPIKeyBookUnrevoked: the account's keys not known revoked, on its
// service only, oldest first, without the revoked ones (both backends).
func TestAPIKeyBookUnrevoked(t *testing.T) {
	for name, loc := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, loc(t))
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			for i, k := range []struct{ service, account, key string }{
				{"https://svc", "acme", "mpk_1"}, {"https://svc", "acme", "mpk_2"}, {"https://svc", "acme", "mpk_3"},
				{"https://svc", "crane", "mpk_4"}, {"https://other", "acme", "mpk_5"},
			} {
				c := keyrotate.Created{ID: int64(i + 1), Pair: keyrotate.Pair{Key: k.key}}
				if err := s.RecordKey(ctx, k.service, k.account, "", c, t0.Add(time.Duration(i)*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.RecordRevoked(ctx, "https://svc", "mpk_2", t0); err != nil {
				t.Fatal(err)
			}
			got, err := s.Unrevoked(ctx, "https://svc", "acme")
			if err != nil || len(got) != 2 || got[0].Key != "mpk_1" || got[0].ID != 1 || got[1].Key != "mpk_3" || got[1].ID != 3 {
				t.Fatalf("Unrevoked = %+v (%v), want mpk_1 (1) and mpk_3 (3)", got, err)
			}
		})
	}
}
