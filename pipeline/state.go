package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RunRecord describes one apply run for the state store: who ran it, from
// where, with which inputs and for which accounts.
type RunRecord struct {
	ID       int64     `json:"id"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	User     string    `json:"user"`
	Host     string    `json:"host"`
	// Command is the command line with secrets removed.
	Command string `json:"command"`
	// Service is the API base URL the run wrote to; history is kept per
	// service and account.
	Service  string      `json:"service"`
	Files    []InputFile `json:"files"`
	Accounts []string    `json:"accounts"`
	// Keys are the AccountLockKey of the key pair of each configured
	// account: the store records Service as the address each has its
	// history under, when it has none yet (ServiceAddress.CheckHistory).
	Keys []string `json:"-"`
	// ChangeSet is the signature of the saved change set the run applied, or "".
	ChangeSet string `json:"change_set,omitempty"`
	// Signer is the name of the person who signed the change set off, as
	// its verified sign-off gives it (SavedChangeSet.VerifySignOff), or "".
	Signer string `json:"signer,omitempty"`
	// Status is "running" while the run goes on, then "ok", "partial" or
	// "stopped"; RunInterrupted for a run that ended without recording its
	// end (killed, crashed, a power cut), once a later run took the lock
	// of one of its accounts (StateStore.BeginRun).
	Status string `json:"status"`
}

// Statuses of a RunRecord besides "ok", "partial" and "stopped".
const (
	// RunRunning is the status of a run that has not recorded its end.
	RunRunning = "running"
	// RunInterrupted is the status of a run that ended without recording
	// its end: a later run held the lock of one of its accounts, which a
	// run holds until its end, so it was no longer running.
	RunInterrupted = "interrupted"
)

// InputFile is an input file and the SHA-256 of its content.
type InputFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// CounterWrite is one counter of a target an apply wrote: its value before
// and after, and whether it was sent (a counter the file set that already
// held its value is recorded with Sent false: the service held what the
// file says after the run).
type CounterWrite struct {
	Counter string `json:"counter"`
	Before  *int64 `json:"before"`
	After   int64  `json:"after"`
	Sent    bool   `json:"sent"`
}

// TargetWrite is one target update request of an apply and its outcome,
// recorded as soon as the request completes.
type TargetWrite struct {
	Account       string         `json:"account"`
	PlanID        int64          `json:"plan_id"`
	PlanName      string         `json:"plan_name,omitempty"`
	MilestoneID   int64          `json:"milestone_id"`
	TargetID      int64          `json:"target_id"`
	YearNumber    int            `json:"year_number"`
	FinancialYear string         `json:"financial_year,omitempty"`
	TargetType    string         `json:"target_type"`
	File          string         `json:"file,omitempty"`
	Counters      []CounterWrite `json:"counters"`
	// Outcome is "ok", OutcomePending (recorded before the request was
	// sent, its answer not recorded yet), an adoption (OutcomeAdopted), or
	// the error of a failed request (then nothing of it counts as
	// applied).
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
	// ID is the store's id of a write recorded as pending (RecordPending):
	// its answer is recorded under it. 0 otherwise.
	ID int64 `json:"-"`
}

// Outcomes of a TargetWrite besides "ok" and an error.
const (
	// OutcomePending is a write recorded before its request was sent
	// whose answer is not recorded (yet: a run killed, or whose store
	// lost the end of its journal, leaves it so).
	OutcomePending = "pending"
	// OutcomeAdopted starts the outcome of a write a later run found on
	// the service (see readLastValues): it counts as applied.
	OutcomeAdopted = "adopted"
	// OutcomeLeftOut starts the outcome of a pending write a later run
	// found the service not holding: it was not applied (never sent, or
	// refused), or the values were changed on the service since.
	OutcomeLeftOut = "not applied, or changed on the service since"
	// OutcomeMoot starts the outcome of a pending write a later run found
	// older than a later write of every counter it has.
	OutcomeMoot = "unknown"
)

// Applied reports whether the counters of w count as applied: it
// succeeded, or was adopted.
func (w TargetWrite) Applied() bool { return AppliedOutcome(w.Outcome) }

// AppliedOutcome reports whether the counters of a target write recorded
// with outcome o count as applied: it succeeded ("ok"), or a later run
// found the service holding them (OutcomeAdopted, also as the outcome of
// the pending write that run resolved).
func AppliedOutcome(o string) bool {
	return o == "ok" || strings.HasPrefix(o, OutcomeAdopted)
}

// AdoptedFrom returns the run whose write a target write with outcome o
// says was adopted ("adopted from run 12: ..."): the pending write of
// that run, and the record of it the run that adopted it made.
func AdoptedFrom(o string) (run int64, ok bool) {
	rest, ok := strings.CutPrefix(o, OutcomeAdopted+" from run ")
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	id, err := strconv.ParseInt(rest[:n], 10, 64)
	return id, err == nil
}

// Held counts the counters of w that count as already held: the rule
// for a counter recorded as applied but not sent (heldCounter), by which
// apply's summary (RunReport.CountersHeld) and history
// (HistoryEntry.Held) count alike.
func (w TargetWrite) Held() int {
	n := 0
	for _, c := range w.Counters {
		if heldCounter(c.Sent, w.Outcome) {
			n++
		}
	}
	return n
}

// Held reports whether the counter of e counts as already held by its
// run (heldCounter).
func (e HistoryEntry) Held() bool { return heldCounter(e.Sent, e.Outcome) }

// heldCounter is the one rule for a counter "already held": its run left
// it as it was, not sent, because the service already held the file's
// value, and recorded that value as applied (a write that applied, or
// the record of a target in sync).
func heldCounter(sent bool, outcome string) bool { return !sent && AppliedOutcome(outcome) }

// HeldText words n counters already held, as apply's summary and history
// both say it.
func HeldText(n int) string {
	return fmt.Sprintf("%s already held the file's values: recorded as applied by this run, not sent", Plural(n, "counter"))
}

// PendingWrite is a write recorded as pending by run RunID whose answer
// was never recorded.
type PendingWrite struct {
	RunID int64
	Write TargetWrite
}

// pendingWriteSource is the part of a StateStore that knows the pending
// writes to targets of a service (by the service's target ids).
type PendingWriteSource interface {
	PendingWrites(ctx context.Context, service string, targetIDs []int64) ([]PendingWrite, error)
}

// LastWrite is the last value eepipe applied to one counter: the value and
// the run that wrote it.
type LastWrite struct {
	Value int64     `json:"value"`
	RunID int64     `json:"run_id"`
	At    time.Time `json:"at"`
	File  string    `json:"file,omitempty"`
}

// String formats the run for messages: "run 12 on 2026-11-24".
func (w LastWrite) String() string {
	return fmt.Sprintf("run %d on %s", w.RunID, w.At.UTC().Format("2006-01-02 15:04 UTC"))
}

// CounterKey names one counter of one stored target of an account.
type CounterKey struct {
	TargetID int64
	Counter  string
}

// FieldWrite is one plan field whose value eepipe applied: written by a
// create or a metadata update, or found already holding the file's value
// (a plan in sync). It becomes the field's last applied value.
type FieldWrite struct {
	Account string    `json:"account"`
	PlanID  int64     `json:"plan_id"`
	Field   string    `json:"field"` // "name", "sector", "scorecard_id", "start_date", "end_date"
	Value   string    `json:"value"`
	File    string    `json:"file,omitempty"`
	At      time.Time `json:"at"`
}

// LastFieldWrite is the last value eepipe applied to one plan field: the
// value and the run that applied it.
type LastFieldWrite struct {
	Value string    `json:"value"`
	RunID int64     `json:"run_id"`
	At    time.Time `json:"at"`
	File  string    `json:"file,omitempty"`
}

// String formats the run for messages: "run 12 on 2026-11-24".
func (w LastFieldWrite) String() string { return w.Run().String() }

// run is the write as a LastWrite, for ChangeClass.Words (which names the
// run only).
func (w *LastFieldWrite) Run() *LastWrite {
	if w == nil {
		return nil
	}
	return &LastWrite{RunID: w.RunID, At: w.At, File: w.File}
}

// FieldKey names one field of one stored plan.
type FieldKey struct {
	PlanID int64
	Field  string
}

// HistoryQuery filters `eepipe history`; zero fields do not filter.
type HistoryQuery struct {
	Service string
	Account string
	PlanID  int64
	Counter string
	Since   time.Time
	Limit   int
}

// HistoryEntry is one counter written by one run.
type HistoryEntry struct {
	Run           RunRecord `json:"run"`
	Account       string    `json:"account"`
	PlanID        int64     `json:"plan_id"`
	PlanName      string    `json:"plan_name,omitempty"`
	TargetID      int64     `json:"target_id"`
	YearNumber    int       `json:"year_number"`
	FinancialYear string    `json:"financial_year,omitempty"`
	TargetType    string    `json:"target_type"`
	File          string    `json:"file,omitempty"`
	Counter       string    `json:"counter"`
	Before        *int64    `json:"before"`
	After         int64     `json:"after"`
	Sent          bool      `json:"sent"`
	Outcome       string    `json:"outcome"`
	At            time.Time `json:"at"`
}

// PlanWrite is one plan-level request of an apply (a create, a metadata
// update, the delete of a recreate) and its outcome.
type PlanWrite struct {
	Account  string    `json:"account"`
	PlanID   int64     `json:"plan_id"` // 0 for a create that failed
	PlanName string    `json:"plan_name,omitempty"`
	Action   string    `json:"action"` // "create", "update name, sector", "delete"
	Outcome  string    `json:"outcome"`
	At       time.Time `json:"at"`
}

// RunJournal records an apply as it goes: every target write and plan
// request as soon as it completes, so that a run killed half-way leaves
// the writes it made on record.
type RunJournal interface {
	// TargetsSending records target writes before their requests are
	// sent (their counters, outcome pending; a plan's together) and
	// returns the ids TargetsWritten records their answers under: a run
	// killed before an answer is recorded leaves its write pending, for
	// the next run to find.
	TargetsSending(ctx context.Context, ws []TargetWrite) ([]int64, error)
	// TargetsWritten records target writes and their outcomes (w.ID: the
	// id TargetsSending returned, or 0), together: a plan's answers.
	TargetsWritten(ctx context.Context, ws []TargetWrite) error
	// TargetsInSync records targets the run did not patch, whose counters
	// the file sets already held the file's values (all Sent false): the
	// values the run agreed with the service.
	TargetsInSync(ctx context.Context, ws []TargetWrite) error
	PlanWritten(ctx context.Context, w PlanWrite) error
	// PendingResolved records what became of writes an earlier run left
	// pending (w.ID its id, w.Outcome what this run found); the adopted
	// ones (Applied) are recorded as writes of this run too.
	PendingResolved(ctx context.Context, ws []TargetWrite) error
	// FieldsApplied records the plan fields a run applied: written by a
	// create or a metadata update, or found holding the file's value.
	FieldsApplied(ctx context.Context, ws []FieldWrite) error
}

// StateStore is the run history eepipe keeps between runs (an adapter
// implements it over SQLite or PostgreSQL): the runs, the values each run
// wrote, and a lock per account.
type StateStore interface {
	// BeginRun records the start of a run and returns its id. The caller
	// holds the locks of r.Accounts: an earlier run of the same service
	// and one of those accounts still recorded as running ended without
	// recording its end, and is recorded as RunInterrupted.
	BeginRun(ctx context.Context, r RunRecord) (int64, error)
	// RecordPending records target writes of run id as pending before
	// their requests are sent, in one transaction, and returns their ids.
	RecordPending(ctx context.Context, runID int64, ws []TargetWrite) ([]int64, error)
	// RecordWrite records one target write of run id; for a write
	// recorded as pending (w.ID set), its outcome.
	RecordWrite(ctx context.Context, runID int64, w TargetWrite) error
	// RecordWrites records several target writes of run id in one
	// transaction; for those recorded as pending (w.ID set), their outcome.
	RecordWrites(ctx context.Context, runID int64, ws []TargetWrite) error
	// ResolvePending records the outcome of writes another run left
	// pending (w.ID) as found by run id; the adopted ones (Applied) are
	// also recorded as writes of run id, whose counters count as applied.
	ResolvePending(ctx context.Context, runID int64, ws []TargetWrite) error
	// RecordPlanWrite records one plan request of run id.
	RecordPlanWrite(ctx context.Context, runID int64, w PlanWrite) error
	// PlanWrites lists the plan requests, oldest first.
	PlanWrites(ctx context.Context, q HistoryQuery) ([]PlanWriteEntry, error)
	// FinishRun records the end of run id with status.
	FinishRun(ctx context.Context, runID int64, status string, finished time.Time) error
	// LastWrites returns, per counter of the given targets of an account of
	// a service, the last value a successful write of eepipe left. The
	// targets are the service's (their ids are its own): a write recorded
	// under another name of the account counts.
	LastWrites(ctx context.Context, service, account string, targetIDs []int64) (map[CounterKey]LastWrite, error)
	// RecordFields records the plan fields run id applied as their last
	// applied values, in one transaction.
	RecordFields(ctx context.Context, runID int64, ws []FieldWrite) error
	// LastFields returns, per field of the given plans of an account of a
	// service, the last value eepipe applied (by plan id, as LastWrites).
	LastFields(ctx context.Context, service, account string, planIDs []int64) (map[FieldKey]LastFieldWrite, error)
	// ChangeSetRun returns the run that carried the change set with this
	// signature to its end (nil when none did: runs that stopped or
	// failed part of it do not count).
	ChangeSetRun(ctx context.Context, sha string) (*RunRecord, error)
	// History lists counter writes, oldest first.
	History(ctx context.Context, q HistoryQuery) ([]HistoryEntry, error)
	// Runs lists runs, oldest first.
	Runs(ctx context.Context, q HistoryQuery) ([]RunRecord, error)
	// LockAccount takes the store's lock on an account of a service (""
	// for a lock on every address of it: an account's key pair),
	// waiting up to wait; held by another run it returns a *StoreLockHeldError.
	// The returned func releases it. Stores without shared locks return a
	// no-op.
	LockAccount(ctx context.Context, service, account, holder string, wait time.Duration) (func(), error)
	Close() error
}

// PlanWriteEntry is one plan request of one run.
type PlanWriteEntry struct {
	RunID int64 `json:"run_id"`
	PlanWrite
}

// StoreLockHeldError is the failure to take a lock of the state store
// (an account's, or the lock of the store's schema upgrade) held by
// another run.
type StoreLockHeldError struct {
	Account string
	// What is locked when it is not an account, for people: "the state
	// store's schema upgrade".
	What   string
	Holder string // who holds it, as the holder recorded itself or as PostgreSQL knows its session
	Since  time.Time
	Waited time.Duration
}

func (e *StoreLockHeldError) Error() string {
	who := e.Holder
	if who == "" {
		who = "another eepipe run"
	}
	what := "account " + e.Account
	if e.What != "" {
		what = e.What
	}
	s := fmt.Sprintf("%s is locked by %s", what, who)
	if !e.Since.IsZero() {
		s += " since " + e.Since.UTC().Format(time.RFC3339)
	}
	if e.Waited > 0 {
		s += fmt.Sprintf(" (waited %s; raise --lock-wait to wait longer)", e.Waited)
	} else {
		s += " (use --lock-wait to wait for it)"
	}
	return s
}

// StoreLockLostError says that the state store's lock of an account, held
// by this run, was lost while the run went on: its PostgreSQL session
// ended (idle_session_timeout, pg_terminate_backend, a proxy or server
// restart) or stopped answering. Another run may have taken the lock and
// be writing the account, so the run stops before its next write.
type StoreLockLostError struct {
	Account string
	Err     error // why the lock is taken as lost
}

func (e *StoreLockLostError) Error() string {
	return fmt.Sprintf("the state store's lock of account %s was lost (%v): another run may now hold it and write the account, "+
		"so this run stopped before its next write; run apply again to finish (it reads the plans again under a new lock)", e.Account, e.Err)
}

func (e *StoreLockLostError) Unwrap() error { return e.Err }

// ErrStoreTooNew is the refusal of a store written by a newer eepipe.
var ErrStoreTooNew = errors.New("the state store was written by a newer eepipe")

// storeJournal is a RunJournal over a StateStore for one run.
type storeJournal struct {
	store StateStore
	run   int64
}

// JournalFor returns a RunJournal recording into run id of store.
func JournalFor(store StateStore, runID int64) RunJournal {
	return storeJournal{store: store, run: runID}
}

// TargetsSending implements RunJournal.
func (j storeJournal) TargetsSending(ctx context.Context, ws []TargetWrite) ([]int64, error) {
	return j.store.RecordPending(context.WithoutCancel(ctx), j.run, ws)
}

// TargetsWritten implements RunJournal.
func (j storeJournal) TargetsWritten(ctx context.Context, ws []TargetWrite) error {
	// Record even when ctx is cancelled: the writes happened.
	return j.store.RecordWrites(context.WithoutCancel(ctx), j.run, ws)
}

// TargetsInSync implements RunJournal.
func (j storeJournal) TargetsInSync(ctx context.Context, ws []TargetWrite) error {
	return j.store.RecordWrites(context.WithoutCancel(ctx), j.run, ws)
}

// PendingResolved implements RunJournal.
func (j storeJournal) PendingResolved(ctx context.Context, ws []TargetWrite) error {
	return j.store.ResolvePending(context.WithoutCancel(ctx), j.run, ws)
}

// PlanWritten implements RunJournal.
func (j storeJournal) PlanWritten(ctx context.Context, w PlanWrite) error {
	return j.store.RecordPlanWrite(context.WithoutCancel(ctx), j.run, w)
}

// FieldsApplied implements RunJournal.
func (j storeJournal) FieldsApplied(ctx context.Context, ws []FieldWrite) error {
	return j.store.RecordFields(context.WithoutCancel(ctx), j.run, ws)
}

// SavedProgress is what earlier runs of a change set wrote: the runs
// that recorded a write, and the plans their creates made.
type SavedProgress struct {
	Runs    []int64
	Created []SavedCreated
}

// SavedCreated is a plan an earlier run of a change set created.
type SavedCreated struct {
	Account string
	PlanID  int64
}

// Resumed reports whether an earlier run wrote part of the set.
func (p *SavedProgress) Resumed() bool { return p != nil && len(p.Runs) > 0 }

// HasCreated reports whether an earlier run of the set created plan id on
// account.
func (p *SavedProgress) HasCreated(account string, id int64) bool {
	if p == nil {
		return false
	}
	for _, c := range p.Created {
		if c.Account == account && c.PlanID == id {
			return true
		}
	}
	return false
}
