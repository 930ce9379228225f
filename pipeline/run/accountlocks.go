package run

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// AccountLocks decides which locks a run takes and under which key: the
// configured accounts of one service (BaseURL) and their key pairs. Names
// are compared by SameAccount, as plans are routed, so "UMOYA" in an
// account column locks umoya.
type AccountLocks struct {
	BaseURL  string
	Accounts []pipeline.LockAccount
}

// AccountLockName is one lock to take: its key and the name of the
// account it is taken for, for messages.
type AccountLockName struct {
	Key  string
	Name string
	// keyPair: the lock of the account's key pair (AccountLockKey), one
	// for every address of the service; else the lock of its name on
	// this service.
	keyPair bool
}

// NamedAccounts returns the accounts the plans name (their account column
// or grid label), when every plan names one: such a plan is written with
// that account's key pair or not at all, so a run over them need lock
// only those accounts, and an apply to another account of the same
// configuration goes on at the same time. nil when a plan names none (the
// company lookup or its plan_id decides, after the lock): then every
// configured account is locked.
func NamedAccounts(plans []*pipeline.InputPlan) []string {
	var names []string
	for _, p := range plans {
		if p.Account == "" {
			return nil
		}
		if !slices.ContainsFunc(names, func(n string) bool { return pipeline.SameAccount(n, p.Account) }) {
			names = append(names, p.Account)
		}
	}
	return names
}

// Local returns the local locks (Locker) of the configured accounts named
// in only (none: all of them), keyed by AccountLockKey, in configuration
// order.
func (l AccountLocks) Local(only []string) []AccountLockName {
	var out []AccountLockName
	for _, a := range l.Accounts {
		if len(only) == 0 || slices.ContainsFunc(only, func(n string) bool { return pipeline.SameAccount(n, a.Name) }) {
			out = append(out, AccountLockName{Key: pipeline.AccountLockKey(a.APIKey), Name: a.Name, keyPair: true})
		}
	}
	return out
}

// store returns the state store's locks of the named accounts, sorted by
// key (one order on every host) with no key twice. The lock is per
// account of the service, known by its key pair (as the local lock), not
// by the name a configuration gives it nor by the address that reaches
// the service: a consultant's "default" and a cron host's "acme-prod"
// with the same key, or configurations reaching the service at
// http://127.0.0.1:8080 and http://localhost:8080, never apply at once. Each
// name is locked by name too (AccountKey: one lock however the name is
// spelled), which is what other tools and older runs lock.
func (l AccountLocks) store(names []string) []AccountLockName {
	var locks []AccountLockName
	for _, n := range names {
		locks = append(locks, AccountLockName{Key: pipeline.AccountKey(n), Name: n})
		for _, a := range l.Accounts {
			if pipeline.SameAccount(a.Name, n) && a.APIKey != "" {
				locks = append(locks, AccountLockName{Key: pipeline.AccountLockKey(a.APIKey), Name: n, keyPair: true})
			}
		}
	}
	slices.SortFunc(locks, func(a, b AccountLockName) int { return cmp.Compare(a.Key, b.Key) })
	return slices.CompactFunc(locks, func(a, b AccountLockName) bool { return a.Key == b.Key })
}

// nameOf returns the configured name of the account whose store lock
// Store named key (an account name, or an AccountLockKey); key itself
// when no account has it.
func (l AccountLocks) nameOf(key string) string {
	for _, a := range l.Accounts {
		if pipeline.SameAccount(a.Name, key) || (a.APIKey != "" && pipeline.AccountLockKey(a.APIKey) == key) {
			return a.Name
		}
	}
	return key
}

// StoreLocker takes a state store's account locks (StateStore.LockAccount).
type StoreLocker interface {
	LockAccount(ctx context.Context, service, account, holder string, wait time.Duration) (func(), error)
}

// LockStore takes the state store's locks of the named accounts (Store),
// as holder, each waiting up to wait, and returns their release. On an
// error the locks taken are released; a held lock is a
// *StoreLockHeldError naming the account as this run knows it.
func (l AccountLocks) LockStore(ctx context.Context, st StoreLocker, names []string, holder string, wait time.Duration) (func(), error) {
	var unlocks []func()
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, k := range l.store(names) {
		service := pipeline.ServiceKey(l.BaseURL)
		if k.keyPair {
			service = "" // the key pair's lock holds on every address of the service
		}
		u, err := st.LockAccount(ctx, service, k.Key, holder, wait)
		if err != nil {
			release()
			var held *pipeline.StoreLockHeldError
			if errors.As(err, &held) {
				held.Account = k.Name
			}
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

// accountLockError is the failure to take an account's local lock for a
// reason other than its being held.
type accountLockError struct {
	account string
	err     error
}

func (e *accountLockError) Error() string {
	return "could not take the lock of account " + e.account + ": " + e.err.Error()
}

func (e *accountLockError) Unwrap() error { return e.err }

// TakeAccountLocks takes the local locks (Local) with locker, in key
// order so that two runs over overlapping accounts never wait on each
// other in a circle, one lock per key (two accounts with the same key
// pair: one lock). A lock found held is waited for up to wait, after
// waiting is called (nil: not told). It returns the locks taken, also
// with an error (the caller releases them, the last taken first); the
// error is a *LockHeldError whose What names the account, ctx's error when
// it was cancelled while waiting, or an *accountLockError.
func TakeAccountLocks(ctx context.Context, locker pipeline.Locker, locks []AccountLockName, info pipeline.LockInfo, wait time.Duration,
	waiting func(AccountLockName, *pipeline.LockHeldError)) ([]pipeline.Unlocker, error) {
	sorted := slices.Clone(locks)
	slices.SortStableFunc(sorted, func(a, b AccountLockName) int { return cmp.Compare(a.Key, b.Key) })
	var taken []pipeline.Unlocker
	for n, k := range sorted {
		if n > 0 && k.Key == sorted[n-1].Key {
			continue
		}
		u, err := locker.Lock(ctx, k.Key, info, 0)
		var first *pipeline.LockHeldError
		if err != nil && wait > 0 && errors.As(err, &first) {
			if waiting != nil {
				waiting(k, first)
			}
			u, err = locker.Lock(ctx, k.Key, info, wait)
		}
		if err != nil {
			var held *pipeline.LockHeldError
			switch {
			case errors.As(err, &held):
				held.What = "the lock of account " + k.Name
				return taken, held
			case ctx.Err() != nil:
				return taken, err
			}
			return taken, &accountLockError{account: k.Name, err: err}
		}
		taken = append(taken, u)
	}
	return taken, nil
}

// StoreLockChecker checks that a state store still holds the account
// locks it took (statestore's CheckLocks).
type StoreLockChecker interface {
	CheckLocks(ctx context.Context) error
}

// CheckStore returns the check of st's account locks that a run makes
// before every write (RunOptions.CheckLock). A lost lock is a
// *StoreLockLostError naming the account as the configuration does
// (nameOf).
func (l AccountLocks) CheckStore(st StoreLockChecker) func(context.Context) error {
	return func(ctx context.Context) error {
		err := st.CheckLocks(ctx)
		var lost *pipeline.StoreLockLostError
		if errors.As(err, &lost) {
			return &pipeline.StoreLockLostError{Account: l.nameOf(lost.Account), Err: lost.Err}
		}
		return err
	}
}
