package keyrotate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// Lifetimes are the values of a new key's expires_in the service takes
// (contract-notes A5); none means a key that never expires.
var Lifetimes = []string{"30d", "90d", "180d", "365d"}

// CheckLifetime checks an --expires-in value: "" or one of Lifetimes.
func CheckLifetime(s string) error {
	if s == "" || slices.Contains(Lifetimes, s) {
		return nil
	}
	return fmt.Errorf("--expires-in %q: the service takes %s, or no --expires-in for a key that never expires", s, strings.Join(Lifetimes, ", "))
}

// Pair is a key pair. String shows a short form of the key, never the
// secret.
type Pair struct {
	Key    string
	Secret string
}

// String is the key as messages show it (Mask).
func (p Pair) String() string { return Mask(p.Key) }

// GoString is String, so that %#v never shows the secret.
func (p Pair) GoString() string { return p.String() }

// Mask shows enough of an API key to tell two apart ("mpk_…x_acme"); a
// key is not a secret, but logs and reports never hold one in full.
func Mask(k string) string {
	if len(k) <= 12 {
		return k
	}
	return k[:4] + "…" + k[len(k)-6:]
}

// Created is a key the service created: its id (to revoke it), the pair
// and its expiry (ISO 8601; "" when it never expires).
type Created struct {
	ID int64
	Pair
	ExpiresAt string
}

// Service is the key endpoints and a read, signed with one key pair.
type Service interface {
	// Create creates a key of the account.
	Create(ctx context.Context, expiresIn string) (Created, error)
	// Revoke revokes the account's key id (not the signing key).
	Revoke(ctx context.Context, id int64) error
	// Check is a cheap signed read: nil when the key pair is accepted.
	Check(ctx context.Context) error
}

// Config is where the configuration keeps an account's key pair.
type Config interface {
	// Switch stores the new key pair where the configuration reads it:
	// the secret (a file replaced, or told to the person when it comes
	// from the environment) and the key with its id. It returns the
	// notes for the person (what they must still change) and undo, which
	// puts back what Switch changed; on an error Switch has changed
	// nothing.
	Switch(ctx context.Context, c Created) (notes []string, undo func() error, err error)
	// Current is the account's key pair as the configuration now reads
	// it, with a secret from the environment taken as switched.
	Current() (Pair, error)
}

// Book keeps the ids of the keys eepipe created, by service and key (the
// state store).
type Book interface {
	// KeyID returns the id of key on service; ok is false when unknown.
	KeyID(ctx context.Context, service, key string) (id int64, ok bool, err error)
	// RecordKey records a key created for account with the key by, which
	// hands its run history over to the new key: the address the history
	// is kept under (docs/apply-and-state.md, "The state store"), so that a
	// run with the new key through another address is stopped as one with
	// the old key would be.
	RecordKey(ctx context.Context, service, account, by string, c Created, at time.Time) error
	// RecordRevoked records that key was revoked.
	RecordRevoked(ctx context.Context, service, key string, at time.Time) error
	// Unrevoked returns the keys (id and key, never a secret) the book
	// holds for account on service and does not know revoked.
	Unrevoked(ctx context.Context, service, account string) ([]Created, error)
}

// Rotation is one account's rotation: the old pair as the configuration
// holds it, its id when the configuration gives one (0: unknown), the new
// key's lifetime, and the service (Dial: a client signed with a pair),
// the configuration and the book (nil: none) it goes through.
type Rotation struct {
	Service   string // pipeline.ServiceKey of the base URL, for the book
	Account   string
	Old       Pair
	OldID     int64
	ExpiresIn string
	Dial      func(Pair) Service
	Config    Config
	Book      Book
	Now       func() time.Time
}

// Result is what a rotation did: the key active in the configuration at
// its end (the new one once switched, else the old one), the new key
// (nil when none was created), the old key's id (0 when unknown) and
// whether it was revoked, and the notes for the person.
type Result struct {
	Active     Pair
	New        *Created
	OldID      int64
	OldRevoked bool
	Notes      []string
}

// Step names a rotation's steps, in order.
type Step string

// The steps of a rotation.
const (
	StepCreate Step = "create the new key"
	StepSwitch Step = "store the new key in the configuration"
	StepCheck  Step = "check the new key with a read"
	StepRevoke Step = "revoke the old key"
)

// Error is a rotation that failed at Step; Active is the key the
// configuration holds (a working one: the old key when the switch did not
// happen or was undone) and Notes what the person must know.
type Error struct {
	Step   Step
	Active Pair
	Notes  []string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("key rotation: could not %s: %v; the active key is %s", e.Step, e.Err, e.Active)
	for _, n := range e.Notes {
		s += "; " + n
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Partial reports whether the new key is active and only the old key's
// revocation failed (a partial failure, not a fatal one).
func (e *Error) Partial() bool { return e.Step == StepRevoke }

// Run rotates the key: it creates the new key with the old one, switches
// the configuration over, checks the new key with a read of the
// configuration as it now stands, then revokes the old key with the new
// one. Until the check passes the old key stays valid: a failure before
// then undoes the switch and revokes the new key with the old one, so the
// configuration is left on the old, working key. A failure of the revoke
// leaves the new key active and the old one too, and says so.
func (r Rotation) Run(ctx context.Context) (Result, error) {
	res := Result{Active: r.Old, OldID: r.OldID}
	oldInBook := false
	var left []Created
	if r.Book != nil {
		// The book knows the id the service gave this very key; a
		// configuration's api_key_id may have been edited by hand.
		if id, ok, err := r.Book.KeyID(ctx, r.Service, r.Old.Key); err == nil && ok {
			if res.OldID != 0 && res.OldID != id {
				res.Notes = append(res.Notes, fmt.Sprintf("the configuration gives the old key the id %d, the state store %d (the id its create answered): %d is revoked", res.OldID, id, id))
			}
			res.OldID, oldInBook = id, true
		}
		var notes []string
		left, notes = r.leftovers(ctx)
		res.Notes = append(res.Notes, notes...)
	}
	oldSvc := r.Dial(r.Old)
	c, err := oldSvc.Create(ctx, r.ExpiresIn)
	if err != nil {
		e := &Error{Step: StepCreate, Active: r.Old, Err: err, Notes: slices.Clone(res.Notes)}
		if errors.Is(err, pipeline.ErrUnclearOutcome) {
			e.Notes = append(e.Notes, "a key may have been created whose secret was never received; it counts against the account's five keys until it is revoked in the web application")
		}
		if errors.Is(err, pipeline.ErrUnauthorized) {
			r.repair(ctx, left, e)
		}
		return res, e
	}
	res.New = &c
	if r.Book != nil {
		if err := r.Book.RecordKey(ctx, r.Service, r.Account, r.Old.Key, c, r.now()); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the new key's id %d could not be kept in the state store (%v); it is kept in the configuration as api_key_id", c.ID, err))
		}
		if !oldInBook && res.OldID != 0 {
			// The configuration's api_key_id is replaced by the switch:
			// should this run stop before its revoke, the book still
			// knows the old key's id, and the next rotation names it.
			old := Created{ID: res.OldID, Pair: Pair{Key: r.Old.Key}}
			if err := r.Book.RecordKey(ctx, r.Service, r.Account, "", old, r.now()); err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("the old key's id %d could not be kept in the state store: %v", res.OldID, err))
			}
		}
	}
	notes, undo, err := r.Config.Switch(ctx, c)
	if err != nil {
		return res, r.backOut(ctx, oldSvc, c, StepSwitch, err, nil, res.Notes)
	}
	if err := r.check(ctx, c); err != nil {
		return res, r.backOut(ctx, oldSvc, c, StepCheck, err, undo, res.Notes)
	}
	res.Active = c.Pair
	res.Notes = append(res.Notes, notes...)
	return r.revokeOld(ctx, res, c)
}

// leftovers are the keys the book holds for the account and does not
// know revoked, other than the old key, and the notes on them: a rotation
// that stopped before its revoke (killed, or its revoke failed) left the
// key it replaced active, and a failed back-out the key it created.
func (r Rotation) leftovers(ctx context.Context) ([]Created, []string) {
	keys, err := r.Book.Unrevoked(ctx, r.Service, r.Account)
	if err != nil {
		return nil, []string{fmt.Sprintf("the state store could not list the account's earlier keys: %v", err)}
	}
	var left []Created
	var notes []string
	for _, k := range keys {
		if k.Key != r.Old.Key {
			left = append(left, k)
			notes = append(notes, fmt.Sprintf("the key %s (id %d) of account %s is not known revoked: an earlier rotation may have stopped before revoking it; unless a configuration still uses it, revoke it in the web application", k.Pair, k.ID, r.Account))
		}
	}
	return left, notes
}

// repair mends a configuration whose pair the service refused (e, the
// failed create) when its secret is that of a key of left: a rotation
// killed between its two writes (the secret file, then the
// configuration's api_key) leaves the new secret beside the old key. That
// key is stored as the configuration's (Config.Switch, checked as a
// rotation's new key is) and e then names it active.
func (r Rotation) repair(ctx context.Context, left []Created, e *Error) {
	for _, k := range left {
		p := Pair{Key: k.Key, Secret: r.Old.Secret}
		if r.Dial(p).Check(ctx) != nil {
			continue
		}
		c := Created{ID: k.ID, Pair: p}
		notes, _, err := r.Config.Switch(ctx, c)
		if err == nil {
			err = r.check(ctx, c)
		}
		if err != nil {
			e.Notes = append(e.Notes, fmt.Sprintf("the configuration's secret is that of the key %s (id %d), which an interrupted rotation created, but storing that key in the configuration failed (%v): set the account's api_key to it and api_key_id to %d", p, k.ID, err, k.ID))
			return
		}
		e.Active = p
		e.Notes = append(e.Notes, notes...)
		e.Notes = append(e.Notes, fmt.Sprintf("the configuration's secret was that of the key %s (id %d), which an interrupted rotation created: the configuration now holds that key; rotate again", p, k.ID))
		return
	}
}

// check reads the configuration back (it must now hold the new pair) and
// makes a signed read with that pair.
func (r Rotation) check(ctx context.Context, c Created) error {
	cur, err := r.Config.Current()
	if err != nil {
		return fmt.Errorf("reading the configuration back: %w", err)
	}
	if cur.Key != c.Key || cur.Secret != c.Secret {
		return fmt.Errorf("the configuration read back holds the key %s, not the new key %s", cur, c.Pair)
	}
	return r.Dial(cur).Check(ctx)
}

// backOut ends a rotation that failed at step before the new key was in
// use (notes: the run's so far): the switch undone (undo, when the switch happened) and the new key
// revoked with the old one. The configuration is then on the old key.
func (r Rotation) backOut(ctx context.Context, oldSvc Service, c Created, step Step, cause error, undo func() error, notes []string) error {
	e := &Error{Step: step, Active: r.Old, Err: cause, Notes: slices.Clone(notes)}
	if undo != nil {
		if err := undo(); err != nil {
			// The new key is in the configuration and works for all
			// the failed check said: keep it, do not revoke it.
			e.Active = c.Pair
			e.Notes = append(e.Notes, fmt.Sprintf("putting the old key back in the configuration failed too (%v): the configuration holds the new key %s (id %d), which is left active, and the old key %s is not revoked", err, c.Pair, c.ID, r.Old))
			return e
		}
	}
	if err := oldSvc.Revoke(ctx, c.ID); err != nil {
		e.Notes = append(e.Notes, fmt.Sprintf("the new key %s (id %d) could not be revoked (%v): revoke it in the web application", c.Pair, c.ID, err))
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("the new key %s (id %d) was revoked", c.Pair, c.ID))
		if r.Book != nil {
			_ = r.Book.RecordRevoked(ctx, r.Service, c.Key, r.now()) // the service's word counts, not the book's
		}
	}
	return e
}

// revokeOld revokes the old key with the new one, when its id is known.
func (r Rotation) revokeOld(ctx context.Context, res Result, c Created) (Result, error) {
	if res.OldID == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the old key %s is still active: its id is not known (eepipe did not create it and the configuration gives no api_key_id), so revoke it in the web application", r.Old))
		return res, nil
	}
	if err := r.Dial(c.Pair).Revoke(ctx, res.OldID); err != nil {
		return res, &Error{Step: StepRevoke, Active: c.Pair, Err: err,
			Notes: append(slices.Clone(res.Notes), fmt.Sprintf("the old key %s (id %d) is still active: revoke it in the web application", r.Old, res.OldID))}
	}
	// The service lists no keys, so an id is only known to be the old
	// key's when the old key is refused afterwards.
	if err := r.Dial(r.Old).Check(ctx); !errors.Is(err, pipeline.ErrUnauthorized) {
		why := "it still works"
		if err != nil {
			why = fmt.Sprintf("a read with it did not say (%v)", err)
		}
		return res, &Error{Step: StepRevoke, Active: c.Pair, Err: fmt.Errorf("the key with id %d was revoked, but the old key %s is not refused: %s", res.OldID, r.Old, why),
			Notes: append(slices.Clone(res.Notes), fmt.Sprintf("the id %d was not the old key's (check api_key_id): find which key was revoked, and revoke the old key %s, in the web application", res.OldID, r.Old))}
	}
	res.OldRevoked = true
	if r.Book != nil {
		if err := r.Book.RecordRevoked(ctx, r.Service, r.Old.Key, r.now()); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the old key's revocation could not be recorded in the state store: %v", err))
		}
	}
	return res, nil
}

func (r Rotation) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}
