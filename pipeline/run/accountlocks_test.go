package run

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

func TestNamedAccounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		columns []string
		want    []string
	}{
		{"one spelled twice", []string{"UMOYA", " umoya "}, []string{"UMOYA"}},
		{"two", []string{"acme", "bluecrane", "ACME"}, []string{"acme", "bluecrane"}},
		{"one names none", []string{"acme", ""}, nil},
		{"no plan", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var plans []*pipeline.InputPlan
			for _, c := range tc.columns {
				plans = append(plans, &pipeline.InputPlan{Account: c})
			}
			if got := NamedAccounts(plans); !slices.Equal(got, tc.want) {
				t.Errorf("NamedAccounts = %q, want %q", got, tc.want)
			}
		})
	}
}

var testLocks = AccountLocks{BaseURL: "https://API.example.com/", Accounts: []pipeline.LockAccount{
	{Name: "umoya", APIKey: "mpk_u"}, {Name: "acme", APIKey: "mpk_a"}, {Name: "acme-cron", APIKey: " mpk_a"},
}}

// TestAccountLocksLocal: an account column in another letter case locks
// the configured account, by its key pair; none named locks every one.
func TestAccountLocksLocal(t *testing.T) {
	got := testLocks.Local([]string{"UMOYA"})
	if len(got) != 1 || got[0].Name != "umoya" || got[0].Key != pipeline.AccountLockKey("mpk_u") {
		t.Errorf("Local(UMOYA) = %v, want umoya's lock", got)
	}
	if all := testLocks.Local(nil); len(all) != 3 || all[1].Key != all[2].Key {
		t.Errorf("Local(nil) = %v, want the three accounts, acme's two names under one key", all)
	}
}

// TestAccountLocksStore: the store locks an account by name and by key
// pair, sorted, each key once; NameOf maps either key back to the
// configured name.
func TestAccountLocksStore(t *testing.T) {
	got := testLocks.store([]string{"ACME", "acme"})
	keys := []string{pipeline.AccountKey("acme"), pipeline.AccountLockKey("mpk_a")}
	slices.Sort(keys)
	if len(got) != 2 || got[0].Key != keys[0] || got[1].Key != keys[1] {
		t.Fatalf("Store = %v, want keys %q", got, keys)
	}
	for _, k := range keys {
		if n := testLocks.nameOf(k); n != "acme" {
			t.Errorf("NameOf(%s) = %q, want acme", k, n)
		}
	}
	if n := testLocks.nameOf("account-unknown"); n != "account-unknown" {
		t.Errorf("NameOf(unknown) = %q, want the key itself", n)
	}
}

type fakeStoreLocker struct {
	taken, released []string
	held            string
}

func (f *fakeStoreLocker) LockAccount(_ context.Context, _, account, _ string, _ time.Duration) (func(), error) {
	if account == f.held {
		return nil, &pipeline.StoreLockHeldError{Account: account, Holder: "ops@h"}
	}
	f.taken = append(f.taken, account)
	return func() { f.released = append(f.released, account) }, nil
}

// TestLockStoreHeld: a held store lock releases the ones taken and names
// the account as the run knows it.
func TestLockStoreHeld(t *testing.T) {
	locks := testLocks.store([]string{"Acme"})
	st := &fakeStoreLocker{held: locks[1].Key}
	_, err := testLocks.LockStore(context.Background(), st, []string{"Acme"}, "me", 0)
	var held *pipeline.StoreLockHeldError
	if !errors.As(err, &held) || held.Account != "Acme" {
		t.Fatalf("err = %v, want a StoreLockHeldError naming Acme", err)
	}
	if !slices.Equal(st.taken, st.released) || len(st.taken) != 1 {
		t.Errorf("taken %q, released %q: want the one taken released", st.taken, st.released)
	}
}

type fakeLocker struct {
	order []string
	held  map[string]bool
	waits []time.Duration
}

type fakeUnlock struct{}

func (fakeUnlock) Unlock() error { return nil }

func (f *fakeLocker) Lock(_ context.Context, key string, _ pipeline.LockInfo, wait time.Duration) (pipeline.Unlocker, error) {
	f.waits = append(f.waits, wait)
	if f.held[key] {
		return nil, &pipeline.LockHeldError{What: key, Waited: wait}
	}
	f.order = append(f.order, key)
	return fakeUnlock{}, nil
}

// TestTakeAccountLocks: locks are taken in key order, one per key; a held
// lock is waited for once, told, and named by its account.
func TestTakeAccountLocks(t *testing.T) {
	all := testLocks.Local(nil)
	l := &fakeLocker{}
	taken, err := TakeAccountLocks(context.Background(), l, all, pipeline.LockInfo{}, 0, nil)
	if err != nil || len(taken) != 2 || !slices.IsSorted(l.order) || len(l.order) != 2 {
		t.Fatalf("taken %d, order %q, err %v: want two locks in key order", len(taken), l.order, err)
	}
	umoya := testLocks.Local([]string{"umoya"})[0]
	l = &fakeLocker{held: map[string]bool{umoya.Key: true}}
	var told []string
	taken, err = TakeAccountLocks(context.Background(), l, all, pipeline.LockInfo{}, time.Second, func(n AccountLockName, _ *pipeline.LockHeldError) { told = append(told, n.Name) })
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || held.What != "the lock of account umoya" || held.Waited != time.Second {
		t.Fatalf("err = %v, want umoya's lock held after waiting", err)
	}
	if !slices.Equal(told, []string{"umoya"}) || len(taken) != len(l.order) {
		t.Errorf("told %q, taken %d of %q: want umoya told and the locks taken returned", told, len(taken), l.order)
	}
}

// TestTakeAccountLocksFails: a lock that cannot be taken for another
// reason names its account.
func TestTakeAccountLocksFails(t *testing.T) {
	_, err := TakeAccountLocks(context.Background(), failLocker{}, testLocks.Local([]string{"acme"}), pipeline.LockInfo{}, 0, nil)
	var le *accountLockError
	if !errors.As(err, &le) || le.account != "acme" || !errors.Is(err, errNoFolder) {
		t.Errorf("err = %v, want an accountLockError of acme", err)
	}
}

var errNoFolder = errors.New("no folder")

type failLocker struct{}

func (failLocker) Lock(context.Context, string, pipeline.LockInfo, time.Duration) (pipeline.Unlocker, error) {
	return nil, errNoFolder
}

type lostLocks struct{ err error }

func (l lostLocks) CheckLocks(context.Context) error { return l.err }

// TestCheckStoreNamesTheAccount: a lost store lock, taken under an
// account's key, is reported under the account's configured name.
func TestCheckStoreNamesTheAccount(t *testing.T) {
	cause := errors.New("session ended")
	key := pipeline.AccountLockKey("mpk_u")
	err := testLocks.CheckStore(lostLocks{&pipeline.StoreLockLostError{Account: key, Err: cause}})(context.Background())
	var lost *pipeline.StoreLockLostError
	if !errors.As(err, &lost) || lost.Account != "umoya" || lost.Err != cause {
		t.Errorf("err = %v, want umoya's lock lost", err)
	}
	if err := testLocks.CheckStore(lostLocks{})(context.Background()); err != nil {
		t.Errorf("held locks: %v", err)
	}
}
