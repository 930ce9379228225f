package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// settableClock is a clock for sandbox.Options.Now that a test moves.
type settableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *settableClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *settableClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestConformanceAPIKeys drives the key endpoints of contract-notes A5
// through the client: a create with and without expires_in, the new key
// working on the same account, self-revocation refused, another account's
// key and an unknown id not found, a revoked key refused, and the expiry
// headers of A2 on an expiring key.
func TestConformanceAPIKeys(t *testing.T) {
	clock := &settableClock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	srv := start(t, sandbox.Options{Now: clock.now})
	ctx := context.Background()
	old := client(t, srv, acme)

	forever, err := old.CreateAPIKey(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if forever.ExpiresAt != nil || !strings.HasPrefix(forever.Key, "mpk_") || forever.Secret == "" || forever.ID == 0 || forever.CreatedAt == "" {
		t.Fatalf("create without expires_in: %+v", *forever)
	}
	if strings.Contains(forever.String(), forever.Secret) {
		t.Errorf("String shows the secret: %s", forever)
	}
	fresh := client(t, srv, account{forever.Key, forever.Secret})
	if _, err := fresh.ListPlans(ctx); err != nil {
		t.Fatalf("the new key: %v", err)
	}
	if _, _, ok := fresh.KeyExpiry(); ok {
		t.Error("a key that never expires says it expires soon")
	}

	// A key cannot revoke itself; another account's key and an unknown id
	// are not found.
	expectAPIError(t, "self-revoke", fresh.RevokeAPIKey(ctx, forever.ID), 422)
	blueKey, err := client(t, srv, blue).CreateAPIKey(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	expectAPIError(t, "another account's key", fresh.RevokeAPIKey(ctx, blueKey.ID), 404)
	expectAPIError(t, "unknown id", fresh.RevokeAPIKey(ctx, 99999), 404)

	// Revoking the fixture key (id 1, the first account's) with the new
	// one: the old key is refused afterwards, a second revoke is 404.
	if err := fresh.RevokeAPIKey(ctx, 1); err != nil {
		t.Fatalf("revoke the old key with the new one: %v", err)
	}
	_, err = old.ListPlans(ctx)
	expectAPIError(t, "the revoked key", err, 401)
	expectAPIError(t, "revoke twice", fresh.RevokeAPIKey(ctx, 1), 404)

	// An expiring key: its answers carry X-Api-Key-Expires, and within 30
	// days X-Api-Key-Expires-In; past its expiry it is refused.
	month, err := fresh.CreateAPIKey(ctx, "30d")
	if err != nil {
		t.Fatal(err)
	}
	if month.ExpiresAt == nil || *month.ExpiresAt != "2026-12-22T09:00:00Z" {
		t.Fatalf("30d key expires_at %v, want 2026-12-22T09:00:00Z", month.ExpiresAt)
	}
	monthly := client(t, srv, account{month.Key, month.Secret})
	if _, err := monthly.ListScorecards(ctx); err != nil {
		t.Fatal(err)
	}
	if exp, in, ok := monthly.KeyExpiry(); !ok || exp != "2026-12-22T09:00:00Z" || in != "30d" {
		t.Errorf("expiry headers %q %q %v, want 2026-12-22T09:00:00Z 30d", exp, in, ok)
	}
	year, err := fresh.CreateAPIKey(ctx, "365d")
	if err != nil {
		t.Fatal(err)
	}
	yearly := client(t, srv, account{year.Key, year.Secret})
	if _, err := yearly.ListScorecards(ctx); err != nil {
		t.Fatal(err)
	}
	if exp, in, ok := yearly.KeyExpiry(); ok || exp != "2027-11-22T09:00:00Z" || in != "" {
		t.Errorf("365d key: expiry headers %q %q %v, want only X-Api-Key-Expires 2027-11-22T09:00:00Z", exp, in, ok)
	}
	clock.add(31 * 24 * time.Hour)
	_, err = monthly.ListScorecards(ctx)
	expectAPIError(t, "the expired key", err, 401)

	// A lifetime outside 30d/90d/180d/365d is refused.
	_, err = fresh.CreateAPIKey(ctx, "7d")
	expectAPIError(t, "expires_in 7d", err, 422)
}

// TestConformanceAPIKeyLimit: an account holds at most five active keys;
// the sixth is refused with 422, and a revoke (or an expiry) makes room.
// Another account's keys do not count.
func TestConformanceAPIKeyLimit(t *testing.T) {
	clock := &settableClock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	srv := start(t, sandbox.Options{Now: clock.now})
	ctx := context.Background()
	c := client(t, srv, acme)
	var made []*apiclient.APIKey
	for i := 0; i < 3; i++ {
		k, err := c.CreateAPIKey(ctx, "")
		if err != nil {
			t.Fatalf("key %d: %v", i+2, err)
		}
		made = append(made, k)
	}
	short, err := c.CreateAPIKey(ctx, "30d") // the fifth, with the fixture's
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateAPIKey(ctx, "90d")
	ae := expectAPIError(t, "a sixth key", err, 422)
	if errors.Is(err, apiclient.ErrUnclearOutcome) {
		t.Errorf("a 422 refusal is not an unclear outcome: %v", ae)
	}
	if _, err := client(t, srv, blue).CreateAPIKey(ctx, ""); err != nil {
		t.Errorf("another account's keys counted: %v", err)
	}
	if err := c.RevokeAPIKey(ctx, made[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateAPIKey(ctx, ""); err != nil {
		t.Fatalf("after a revoke: %v", err)
	}
	_, err = c.CreateAPIKey(ctx, "")
	expectAPIError(t, "five again", err, 422)
	clock.add(30*24*time.Hour + time.Second) // the 30d key has expired
	if _, err := c.CreateAPIKey(ctx, ""); err != nil {
		t.Fatalf("after the 30d key %d expired: %v", short.ID, err)
	}
}
