package statestore

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/eepipe/eepipe/pipeline"
)

// The write journal: every record of a run (target writes, their answers,
// plan requests, plan fields, the end of the run) goes through one writer
// goroutine per Store, which commits whatever has queued while it
// committed the previous batch in one transaction (group commit). A
// caller waits for the commit of its batch, so a record it was told is
// made is in the store; what many concurrent requests record costs one
// transaction, not one each; a record nobody waits for goes with the next
// commit (holdFor). On PostgreSQL, more writers share the queue of what
// is waited for, and what is not has a writer of its own. See
// docs/apply-and-state.md, "The state store", for what a crash can lose.

// pendingOutcome is the outcome of a target write recorded before its
// request is sent (RecordPending); its answer replaces it.
const pendingOutcome = pipeline.OutcomePending

// pgWaitedWriters is how many connections of a PostgreSQL store commit
// the records waited for.
const pgWaitedWriters = 2

// maxBatch bounds the records of one transaction.
const maxBatch = 512

// durableEvery is how often at most an SQLite store's journal makes its
// commits durable (synchronous FULL for one transaction, or a checkpoint
// when the journal is idle): a power cut loses at most about that much of
// the history.
const durableEvery = time.Second

type opKind int

const (
	opWrites  opKind = iota // target writes with their counters (pending, or with an outcome)
	opOutcome               // the answer of a pending target write
	opPlan                  // a plan request
	opFields                // plan fields applied
	opFinish                // the end of a run (made durable)
	opResolve               // what became of writes another run left pending
	opSync                  // nothing: done once every record queued before it is
)

// op is one record the journal makes; done gets its error once its batch
// is committed (or failed).
type op struct {
	kind   opKind
	run    int64
	ws     []pipeline.TargetWrite // opWrites; opOutcome: one, with its ID
	ids    []int64                // opWrites: the ids given to ws
	pw     pipeline.PlanWrite
	fws    []pipeline.FieldWrite
	status string
	at     time.Time
	later  bool // queued without waiting (submitLater)
	done   chan error
}

// journal is the writer goroutine of a Store.
type journal struct {
	s      *Store
	sqlite *sqliteStmts // the SQLite statements of the journal's connection
	ops    chan *op
	stop   chan struct{}
	ended  chan struct{}
	once   sync.Once
}

// submit queues o and waits for its batch's commit.
func (s *Store) submit(o *op) error {
	if err := s.queue(o); err != nil {
		return err
	}
	return <-o.done
}

// submitLater queues o without waiting for its commit. When it fails, the
// next record waited for (submit) fails with its error instead of being
// made, so that a run learns of it before its next write.
func (s *Store) submitLater(o *op) error {
	o.later = true
	s.jlater.Add(1)
	if err := s.queue(o); err != nil {
		s.jlater.Add(-1)
		return err
	}
	return nil
}

// flush waits until the records queued without waiting are committed (or
// failed), so that a read sees them.
func (s *Store) flush() {
	if s.jlater.Load() == 0 {
		return
	}
	for _, later := range []bool{true, false} {
		o := &op{kind: opSync}
		o.later = later // on the queue of what is not waited for, then the other
		if s.queue(o) == nil {
			<-o.done
		}
	}
}

func (s *Store) queue(o *op) error {
	s.jonce.Do(func() {
		start := func() *journal {
			j := &journal{s: s, ops: make(chan *op, 4*maxBatch), stop: make(chan struct{}), ended: make(chan struct{})}
			go j.loop()
			return j
		}
		s.j = start()
		s.jl = s.j
		s.jw = []*journal{s.j}
		if s.dialect == dialectPostgres {
			// More connections for what is waited for, taking from one
			// queue: while one waits for the server to commit a batch,
			// another sends the records queued meanwhile, so that a
			// record waits about one round trip, not the end of the one
			// before it too. A record waited for is committed before
			// anything that depends on it is queued (an answer, after
			// its pending write), so their order does not matter.
			for range pgWaitedWriters - 1 {
				j := &journal{s: s, ops: s.j.ops, stop: make(chan struct{}), ended: make(chan struct{})}
				go j.loop()
				s.jw = append(s.jw, j)
			}
			// A connection for what is not waited for: the server works
			// on it at the same time. The end of a run follows the
			// answers on their connection.
			s.jl = start()
			s.jw = append(s.jw, s.jl)
		}
	})
	if !o.later && o.kind != opSync && o.kind != opFinish {
		s.jmu.Lock()
		err := s.jfailed
		s.jfailed = nil
		s.jmu.Unlock()
		if err != nil {
			return err
		}
	}
	j := s.j
	if o.later || o.kind == opFinish {
		j = s.jl
	}
	o.done = make(chan error, 1)
	select {
	case j.ops <- o:
		return nil
	case <-j.ended:
		return fmt.Errorf("the state store %s is closed", s.where)
	}
}

// closeJournal commits what is queued and stops the writers.
func (s *Store) closeJournal() {
	if s.j == nil {
		return
	}
	for _, j := range slices.Backward(s.jw) {
		j.once.Do(func() { close(j.stop) })
		<-j.ended
	}
}

// loop is the writer goroutine: it gathers the records queued into
// batches and commits them until the journal is stopped.
func (j *journal) loop() {
	defer close(j.ended)
	w := &writer{j: j, ctx: context.Background(), lastDurable: time.Now(),
		idle: time.NewTimer(time.Hour), hold: time.NewTimer(time.Hour)}
	w.hold.Stop()
	defer w.close()
	for {
		var first *op
		select {
		case first = <-j.ops:
		case <-w.hold.C:
			batch := w.held
			w.held = nil
			w.commit(batch)
			continue
		case <-w.idle.C:
			w.whenIdle()
			continue
		case <-j.stop:
			select {
			case first = <-j.ops:
			default:
				if len(w.held) > 0 {
					w.commit(w.held)
				}
				return
			}
		}
		if batch := w.take(w.linger(j.gather(first))); batch != nil {
			w.commit(batch)
		}
	}
}

// writer is the state of a journal's loop: its connection, what is
// committed but not yet durable, and the records held for the next
// commit.
type writer struct {
	j           *journal
	ctx         context.Context
	conn        *sql.Conn
	lastDurable time.Time
	dirty       bool        // committed, not yet durable (SQLite)
	idle        *time.Timer // fires durableEvery after a commit not made durable
	// held are records not waited for, kept for the next commit (see
	// holdFor); hold fires when the oldest has waited holdFor.
	held []*op
	hold *time.Timer
	// committed is when the last commit ended (linger).
	committed time.Time
}

// close releases the writer's statements, connection and timers.
func (w *writer) close() {
	w.idle.Stop()
	w.hold.Stop()
	if w.j.sqlite != nil {
		for _, st := range w.j.sqlite.byQ {
			st.Close()
		}
	}
	if w.conn != nil {
		w.conn.Close()
	}
}

// gather returns first with the records queued after it: a few yields
// let the requests whose records the last commit answered queue their
// next records, gathering a batch at the cost of microseconds, not
// milliseconds.
func (j *journal) gather(first *op) []*op {
	batch := []*op{first}
	for range 3 {
		runtime.Gosched()
		if len(j.ops) == 0 {
			break
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case o := <-j.ops:
				batch = append(batch, o)
			default:
				break drain
			}
		}
	}
	return batch
}

// groupLinger is how long at most an SQLite store's journal waits for
// more records before it commits a batch someone waits for, while records
// come fast (lingerFor): a transaction's commit (its pages written to the
// log) costs about as much as its records, so two or three plans'
// records in one commit instead of one each save CPU on a run that is
// bound by it, and the plans waiting meanwhile leave their requests' slots to
// the others (docs/performance.md, "Cost at scale").
const groupLinger = 700 * time.Microsecond

// lingerBatch bounds the records waited for at which the journal stops
// lingering (lingerFull).
const lingerBatch = 8

// lingerFor returns how long the journal may wait for more records to
// join batch before committing it, the last commit having ended at
// committed, when the run records writers plans at once (Options.Writers):
// groupLinger for an SQLite store whose batch holds a record someone
// waits for (a record not waited for waits for the next commit anyway,
// and the end of a run or a read's sync should not) while records come
// fast (the last commit ended less than busyWithin ago) and other plans
// can add theirs (writers above one); else none, so that a run whose
// records come one by one (a slow service, or one plan at a time however
// fast the service) never waits for it.
func lingerFor(dialect dialect, batch []*op, committed time.Time, writers int, now time.Time) time.Duration {
	if dialect != dialectSQLite || writers < 2 || waitedIn(batch) >= lingerFull(writers) || committed.IsZero() || now.Sub(committed) >= busyWithin {
		return 0
	}
	for _, o := range batch {
		if !o.later && (o.kind == opWrites || o.kind == opOutcome || o.kind == opPlan || o.kind == opFields || o.kind == opResolve) {
			return groupLinger
		}
	}
	return 0
}

// lingerFull is how many records waited for end a linger: every plan the
// run records at once, at most lingerBatch.
func lingerFull(writers int) int {
	return min(writers, lingerBatch)
}

// busyWithin is how soon after the last commit a record must come for
// the journal to linger (lingerFor).
const busyWithin = 2 * time.Millisecond

// linger adds to batch the records that come within lingerFor, until
// it holds lingerFull records waited for.
func (w *writer) linger(batch []*op) []*op {
	writers := w.j.s.writers
	d := lingerFor(w.j.s.dialect, batch, w.committed, writers, time.Now())
	if d <= 0 {
		return batch
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for waitedIn(batch) < lingerFull(writers) && len(batch) < maxBatch {
		select {
		case o := <-w.j.ops:
			batch = append(batch, o)
		case <-t.C:
			return batch
		}
	}
	return batch
}

// take returns the batch to commit now, with the records held before
// it, or nil when nothing in it is waited for: then it is held for the
// next commit.
func (w *writer) take(batch []*op) []*op {
	if !slices.ContainsFunc(batch, func(o *op) bool { return !holdable(o) }) && len(w.held)+len(batch) < maxBatch {
		if len(w.held) == 0 {
			w.hold.Reset(holdFor)
		}
		w.held = append(w.held, batch...)
		return nil
	}
	if len(w.held) > 0 {
		batch = append(w.held, batch...)
		w.held = nil
		w.hold.Stop()
	}
	return batch
}

// whenIdle makes the commits a power cut could lose durable, when the
// journal is idle after them (SQLite).
func (w *writer) whenIdle() {
	if w.dirty && w.conn != nil && len(w.held) == 0 {
		w.conn.ExecContext(w.ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		w.dirty, w.lastDurable = false, time.Now()
	}
}

// connect opens the writer's connection on first use.
func (w *writer) connect() error {
	if w.conn != nil {
		return nil
	}
	c, err := w.j.s.db.Conn(w.ctx)
	if err != nil {
		return err
	}
	w.conn = c
	if w.j.s.dialect == dialectSQLite {
		// Checkpoint (copy the log into the database file) every
		// walCheckpointPages pages rather than SQLite's 1,000: a run's
		// commits rewrite the same pages, copied once instead of
		// several times. The journal also checkpoints when it goes
		// idle, and SQLite when the store closes.
		c.ExecContext(w.ctx, `PRAGMA wal_autocheckpoint = `+strconv.Itoa(walCheckpointPages))
	}
	return nil
}

// commit commits batch and answers its records.
func (w *writer) commit(batch []*op) {
	j := w.j
	if err := w.connect(); err != nil {
		for _, o := range batch {
			j.answer(o, j.s.explain(err))
		}
		return
	}
	durable := j.s.dialect == dialectSQLite && (time.Since(w.lastDurable) >= durableEvery || hasFinish(batch))
	errs, unreported := j.commit(w.ctx, w.conn, batch, durable)
	w.committed = time.Now()
	for i, o := range batch {
		j.answer(o, errs[i])
	}
	if unreported != nil {
		j.s.jmu.Lock()
		if j.s.jfailed == nil {
			j.s.jfailed = unreported
		}
		j.s.jmu.Unlock()
	}
	if j.s.dialect == dialectSQLite {
		if durable {
			w.dirty, w.lastDurable = false, time.Now()
		} else {
			w.dirty = true
			w.idle.Reset(durableEvery)
		}
	}
}

// walCheckpointPages is the size of the SQLite write-ahead log (in pages
// of 4 KiB) at which a commit of the journal checkpoints it.
const walCheckpointPages = 8192

// holdFor bounds how long a record not waited for (the answers of a
// plan's writes, a plan request) waits for the next commit, which is
// usually the next plan's pending writes: fewer, larger transactions.
// A kill loses at most what was queued in the last holdFor; the writes
// whose answers it was are pending in the store (docs/apply-and-state.md, "The state
// store").
const holdFor = 50 * time.Millisecond

// holdable reports whether o may wait for the next commit: a record not
// waited for.
func holdable(o *op) bool {
	return o.later && o.kind != opSync && o.kind != opFinish
}

// answer gives o its error, once its batch is committed.
func (j *journal) answer(o *op, err error) {
	if o.later && o.kind != opSync {
		j.s.jlater.Add(-1)
	}
	o.done <- err
}

// waitedIn returns how many records of batch someone waits for.
func waitedIn(batch []*op) int {
	n := 0
	for _, o := range batch {
		if !o.later && o.kind != opSync {
			n++
		}
	}
	return n
}

func hasFinish(batch []*op) bool {
	for _, o := range batch {
		if o.kind == opFinish {
			return true
		}
	}
	return false
}

// commit records batch in one transaction; when it fails, each record is
// tried again in a transaction of its own, so that one bad record fails
// alone. It returns each record's error; the failure of a record not
// waited for is the error of the next record waited for in the batch
// (which is then not made), or else returned as unreported, for the next
// record waited for (Store.queue).
func (j *journal) commit(ctx context.Context, conn *sql.Conn, batch []*op, durable bool) (errs []error, unreported error) {
	errs = make([]error, len(batch))
	if !slices.ContainsFunc(batch, func(o *op) bool { return o.kind != opSync }) {
		return errs, nil
	}
	err := j.tx(ctx, conn, batch, durable)
	if err == nil || len(batch) == 1 {
		for i, o := range batch {
			errs[i] = err
			if err != nil && holdable(o) {
				unreported = err
			}
		}
		return errs, unreported
	}
	for i, o := range batch {
		if unreported != nil && !o.later && o.kind != opSync && o.kind != opFinish {
			errs[i], unreported = unreported, nil
			continue
		}
		errs[i] = j.tx(ctx, conn, []*op{o}, durable)
		if errs[i] != nil && holdable(o) && unreported == nil {
			unreported = errs[i]
		}
	}
	return errs, unreported
}

func (j *journal) tx(ctx context.Context, conn *sql.Conn, batch []*op, durable bool) error {
	ids, err := j.s.names.ids(ctx, conn, j.s.dialect, batchNames(batch))
	if err != nil {
		return j.s.explain(err)
	}
	// The accounts' spellings go first, as the counters' names do: a
	// record's account is always found by its key (accounts.go).
	if err := j.s.accounts.add(ctx, conn, j.s.dialect, batchAccounts(batch)); err != nil {
		return j.s.explain(err)
	}
	if j.s.dialect == dialectPostgres {
		err = j.pgBatch(ctx, conn, batch, ids)
	} else {
		err = j.sqliteTx(ctx, conn, batch, ids, durable)
	}
	return j.s.explain(err)
}

// resolved returns the outcome a pending write gets once run found what
// became of it, and the write run records when it adopted it (nil when
// not).
func resolved(run int64, w pipeline.TargetWrite) (string, *pipeline.TargetWrite) {
	outcome := fmt.Sprintf("%s (found by run %d)", w.Outcome, run)
	if !w.Applied() {
		return outcome, nil
	}
	nw := w
	nw.ID, nw.At = 0, time.Now()
	return outcome, &nw
}

func writeAt(w pipeline.TargetWrite) time.Time {
	if w.At.IsZero() {
		return time.Now()
	}
	return w.At
}
