package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Locker takes exclusive, named locks for the length of a run, so that two
// runs never write the same account at once. The local default
// (pipeline/filelock) is an OS file lock on this host that dies with the
// process; a shared state store can offer team-wide locks behind the same
// interface.
type Locker interface {
	// Lock takes the lock named key, waiting up to wait for its holder to
	// release it (0: not at all). A lock still held then is a
	// *LockHeldError; cancelling ctx stops the wait. info describes this
	// run to whoever finds the lock held.
	Lock(ctx context.Context, key string, info LockInfo, wait time.Duration) (Unlocker, error)
}

// Unlocker releases a lock taken by a Locker.
type Unlocker interface {
	Unlock() error
}

// LockInfo is what a lock records about the run holding it, for the
// message the next run shows.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	User    string    `json:"user,omitempty"`
	Since   time.Time `json:"since"`
	Command string    `json:"command,omitempty"`
}

// IsZero reports whether nothing is known about the holder.
func (i LockInfo) IsZero() bool {
	return i.PID == 0 && i.Host == "" && i.User == "" && i.Command == "" && i.Since.IsZero()
}

// String describes the holder for messages: "process 42 of user ops on
// host h (eepipe apply clients/) since 2026-11-22T03:00:00Z".
func (i LockInfo) String() string {
	if i.IsZero() {
		return "a run that is just starting"
	}
	s := fmt.Sprintf("process %d", i.PID)
	if i.User != "" {
		s += " of user " + i.User
	}
	if i.Host != "" {
		s += " on host " + i.Host
	}
	if i.Command != "" {
		s += " (" + i.Command + ")"
	}
	if !i.Since.IsZero() {
		s += " since " + i.Since.UTC().Format(time.RFC3339)
	}
	return s
}

// LockHeldError says that another run holds a lock.
type LockHeldError struct {
	// What is held, for people: "the lock of account acme" or "the lock
	// file x".
	What string
	// where the lock lives (a file path, a store), for people; may be "".
	where  string
	Holder LockInfo
	Waited time.Duration // how long this run waited before giving up
}

func (e *LockHeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "another eepipe run holds %s: %s", e.What, e.Holder)
	if e.where != "" {
		fmt.Fprintf(&b, " (lock %s)", e.where)
	}
	if e.Waited > 0 {
		fmt.Fprintf(&b, "; waited %s", e.Waited)
	}
	b.WriteString("; wait for it to finish (the lock is released when that process ends, however it ends)")
	return b.String()
}

// AccountLockKey names the lock of one service account: its API key,
// hashed, so that the key never appears in a path, a store or a message.
// On the service an API key belongs to one account, so the key alone
// names the account, whatever address reaches the service (a host name or
// its IP, a proxy: docs/apply-and-state.md, "The state store") and
// whatever a configuration calls the account. The state store also knows
// a key pair by it (the service its history is under).
func AccountLockKey(apiKey string) string {
	sum := sha256.Sum256([]byte("eepipe account lock\x00" + strings.TrimSpace(apiKey)))
	return "account-" + hex.EncodeToString(sum[:16])
}

// LockAccount is a configured account as the locks know it: its name
// (for messages and the by-name store lock) and its API key (hashed into
// its AccountLockKey, never shown).
type LockAccount struct {
	Name   string
	APIKey string
}
