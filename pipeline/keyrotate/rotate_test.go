package keyrotate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// fakeService is an account's keys as the service holds them, by id.
type fakeService struct {
	keys    map[int64]Pair
	revoked map[int64]bool
	next    int64
	failAt  string // "create", "check" or "revoke": that call fails
}

type fakeClient struct {
	s    *fakeService
	pair Pair
}

func (s *fakeService) dial(p Pair) Service { return fakeClient{s, p} }

func (s *fakeService) live(p Pair) bool {
	for id, k := range s.keys {
		if k == p && !s.revoked[id] {
			return true
		}
	}
	return false
}

func (c fakeClient) Create(context.Context, string) (Created, error) {
	if c.s.failAt == "create" || !c.s.live(c.pair) {
		return Created{}, errors.New("create refused")
	}
	c.s.next++
	p := Pair{Key: fmt.Sprintf("mpk_new_%d_key", c.s.next), Secret: fmt.Sprintf("secret-%d", c.s.next)}
	c.s.keys[c.s.next] = p
	return Created{ID: c.s.next, Pair: p}, nil
}

func (c fakeClient) Revoke(_ context.Context, id int64) error {
	if c.s.failAt == "revoke" {
		return errors.New("revoke refused")
	}
	if k, ok := c.s.keys[id]; !ok || k == c.pair || c.s.revoked[id] {
		return errors.New("not found")
	}
	c.s.revoked[id] = true
	return nil
}

func (c fakeClient) Check(context.Context) error {
	if !c.s.live(c.pair) {
		return pipeline.ErrUnauthorized
	}
	if c.s.failAt == "check" && !strings.HasPrefix(c.pair.Key, "mpk_old") {
		return errors.New("check failed")
	}
	return nil
}

// fakeConfig holds one pair; undoFails makes its undo fail.
type fakeConfig struct {
	pair      Pair
	undoFails bool
}

func (c *fakeConfig) Switch(_ context.Context, n Created) ([]string, func() error, error) {
	old := c.pair
	c.pair = n.Pair
	return nil, func() error {
		if c.undoFails {
			return errors.New("disk gone")
		}
		c.pair = old
		return nil
	}, nil
}

func (c *fakeConfig) Current() (Pair, error) { return c.pair, nil }

type fakeBook map[string]int64

func (b fakeBook) KeyID(_ context.Context, _, key string) (int64, bool, error) {
	id, ok := b[key]
	return id, ok, nil
}
func (b fakeBook) RecordKey(_ context.Context, _, _, _ string, c Created, _ time.Time) error {
	b[c.Key] = c.ID
	return nil
}
func (b fakeBook) Unrevoked(context.Context, string, string) ([]Created, error) {
	var out []Created
	for k, id := range b {
		out = append(out, Created{ID: id, Pair: Pair{Key: k}})
	}
	return out, nil
}
func (b fakeBook) RecordRevoked(_ context.Context, _, key string, _ time.Time) error {
	delete(b, key)
	return nil
}

// TestRotationKeepsAWorkingKey: whatever step fails, the configuration
// holds a key the service accepts, and the error names it; the book's id
// wins over the configuration's; an undo that fails keeps the new key
// (which works) rather than revoking it.
func TestRotationKeepsAWorkingKey(t *testing.T) {
	old := Pair{Key: "mpk_old_acme_key", Secret: "old-secret"}
	for _, tc := range []struct {
		failAt    string
		undoFails bool
		onNew     bool
		revoked   bool
	}{
		{"", false, true, true},
		{"create", false, false, false},
		{"check", false, false, false},
		{"check", true, true, false},
		{"revoke", false, true, false},
	} {
		t.Run(fmt.Sprintf("%s/undo-fails=%v", tc.failAt, tc.undoFails), func(t *testing.T) {
			svc := &fakeService{keys: map[int64]Pair{1: old, 9: {Key: "mpk_other_key_", Secret: "x"}}, revoked: map[int64]bool{}, next: 10, failAt: tc.failAt}
			cfg := &fakeConfig{pair: old, undoFails: tc.undoFails}
			book := fakeBook{old.Key: 1}
			r := Rotation{Service: "svc", Account: "acme", Old: old, OldID: 9, Dial: svc.dial, Config: cfg, Book: book}
			res, err := r.Run(context.Background())
			if !svc.live(cfg.pair) {
				t.Fatalf("the configuration holds %v, which the service refuses (err %v)", cfg.pair, err)
			}
			if got := cfg.pair != old; got != tc.onNew {
				t.Errorf("configuration on the new key: %v, want %v (err %v)", got, tc.onNew, err)
			}
			var re *Error
			if errors.As(err, &re) && re.Active != cfg.pair {
				t.Errorf("the error names %v active, the configuration holds %v", re.Active, cfg.pair)
			}
			if (err == nil) != (tc.failAt == "") {
				t.Errorf("err %v", err)
			}
			if res.OldRevoked != tc.revoked || svc.revoked[1] != tc.revoked || svc.revoked[9] {
				t.Errorf("old revoked %v (service: 1 %v, 9 %v), want %v", res.OldRevoked, svc.revoked[1], svc.revoked[9], tc.revoked)
			}
			if tc.failAt == "check" && !tc.undoFails && !svc.revoked[11] {
				t.Error("the new key was not revoked after the failed check")
			}
		})
	}
}

// crashingConfig switches the configuration, then dies (as a run killed
// right after its configuration write).
type crashingConfig struct{ *fakeConfig }

func (c crashingConfig) Switch(ctx context.Context, n Created) ([]string, func() error, error) {
	c.fakeConfig.Switch(ctx, n)
	panic("killed after the configuration write")
}

// TestRotationAfterACrash: a rotation killed after it switched the
// configuration, before its revoke, leaves the old key active; the next
// rotation (from the new key) names the old key and its id, also when the
// id came from the configuration only, and the book still knows it.
func TestRotationAfterACrash(t *testing.T) {
	old := Pair{Key: "mpk_old_acme_key", Secret: "old-secret"}
	svc := &fakeService{keys: map[int64]Pair{1: old}, revoked: map[int64]bool{}, next: 10}
	cfg := &fakeConfig{pair: old}
	book := fakeBook{}
	r := Rotation{Service: "svc", Account: "acme", Old: old, OldID: 1, Dial: svc.dial, Config: crashingConfig{cfg}, Book: book}
	func() {
		defer func() { _ = recover() }()
		_, _ = r.Run(context.Background())
	}()
	if cfg.pair == old || svc.revoked[1] {
		t.Fatalf("the crash did not leave the switched configuration and the old key active: %v %v", cfg.pair, svc.revoked)
	}
	if book[old.Key] != 1 {
		t.Fatalf("the book lost the old key's id: %v", book)
	}
	next := Rotation{Service: "svc", Account: "acme", Old: cfg.pair, OldID: 11, Dial: svc.dial, Config: cfg, Book: book}
	res, err := next.Run(context.Background())
	if err != nil || !res.OldRevoked {
		t.Fatalf("the next rotation: %v %+v", err, res)
	}
	want := "the key " + old.String() + " (id 1) of account acme is not known revoked"
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, want) }) {
		t.Errorf("the next rotation's notes do not name the key the crashed one left active:\n%s", strings.Join(res.Notes, "\n"))
	}
}
