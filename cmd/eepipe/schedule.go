package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
	"github.com/eepipe/eepipe/pipeline/run"
)

// lockFileName is the lock file a run takes in its output folder.
const lockFileName = ".eepipe.lock"

// errMaxDuration is the cause of a run's context when --max-duration passed.
var errMaxDuration = errors.New("the run took longer than --max-duration")

// errInterrupted is the cause of an apply a signal stopped: it sent no
// new request after it (the run report lists the plans not reached).
var errInterrupted = errors.New("interrupted: no new request was sent after the signal; the plans not reached were not applied")

// scheduleOptions are the flags that make a command safe to run unattended:
// stamped outputs in a folder, pruning, a lock and a time bound.
type scheduleOptions struct {
	OutputDir   string
	Keep        int
	LockPath    string
	LockWait    time.Duration
	MaxDuration time.Duration
}

// addScheduleFlags registers --output-dir, --keep, --lock and --max-duration.
func addScheduleFlags(fs *pflag.FlagSet, o *scheduleOptions) {
	fs.StringVar(&o.OutputDir, "output-dir", "", "write outputs into `DIR` with UTC-stamped names (NAME-2026-11-22T0300Z.EXT); takes DIR/"+lockFileName)
	fs.IntVar(&o.Keep, "keep", 0, "with --output-dir: keep only the newest `N` stamped files of the same name (0 keeps all)")
	fs.StringVar(&o.LockPath, "lock", "", "lock `FILE` that stops overlapping runs (default: "+lockFileName+" in --output-dir)")
	fs.DurationVar(&o.LockWait, "lock-wait", 0, "when another run holds a lock this run needs, wait up to `D` for it (0: exit 3 at once, naming the holder)")
	fs.DurationVar(&o.MaxDuration, "max-duration", 0, "bound the whole run (e.g. 20m): when it passes no new request starts, the run exits 3 and its report is written marked incomplete (an export writes no partial file)")
}

// validate checks the flag combination.
func (o *scheduleOptions) validate() error {
	if o.Keep < 0 {
		return exitf(ExitInvalid, "--keep must be 0 or more, not %d", o.Keep)
	}
	if o.Keep > 0 && o.OutputDir == "" {
		return exitf(ExitInvalid, "--keep prunes stamped files in --output-dir; give --output-dir too")
	}
	if o.LockWait < 0 {
		return exitf(ExitInvalid, "--lock-wait must not be negative, not %s", o.LockWait)
	}
	if o.MaxDuration < 0 {
		return exitf(ExitInvalid, "--max-duration must be positive, not %s", o.MaxDuration)
	}
	// A lock file in a folder that does not exist is a mistyped path, as
	// any output's (not a failure to take the lock); --output-dir's
	// folder is created first.
	if o.OutputDir != "" && filepath.Clean(filepath.Dir(o.LockPath)) == filepath.Clean(o.OutputDir) {
		return nil
	}
	return refuseMissingFolder("--lock", o.LockPath, "")
}

// scheduledRun is one run of a command: its context (bounded by
// --max-duration), its lock, the warnings to repeat in the summary and the
// summary line itself.
type scheduledRun struct {
	f       *Factory
	opts    *scheduleOptions
	command string
	start   time.Time           // wall clock, for elapsed
	stamp   time.Time           // f.Now(), for output names
	locks   []pipeline.Unlocker // released by finish, last first
	args    []string            // the command's arguments, for the lock record
	cancel  context.CancelFunc

	mu      sync.Mutex
	outcome string // set when the run ended for a reason the exit code does not tell ("locked", "lock_lost")
	// notCompared counts the plans diff or reconcile could not compare
	// (no account for the company, a refused key): the summary says so.
	notCompared int
	warnings    []string
	outputs     []string
	pruned      []string
}

// startRun creates the output folder, takes the lock and bounds ctx by
// --max-duration. A held lock is a fatal error (exit 3) with the holder in
// the message. Call finish with the command's result.
func startRun(ctx context.Context, f *Factory, command string, o *scheduleOptions) (context.Context, *scheduledRun, error) {
	if err := o.validate(); err != nil {
		return ctx, nil, err
	}
	r := &scheduledRun{f: f, opts: o, command: command, start: time.Now(), stamp: f.Now()}
	if o.OutputDir != "" {
		if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
			return ctx, nil, exitf(ExitFatal, "create output folder %s: %v", o.OutputDir, err)
		}
	}
	lockPath := o.LockPath
	if lockPath == "" && o.OutputDir != "" {
		lockPath = filepath.Join(o.OutputDir, lockFileName)
	}
	if lockPath != "" {
		l, err := filelock.Acquire(ctx, lockPath, r.lockInfo(), 0)
		var first *pipeline.LockHeldError
		if err != nil && o.LockWait > 0 && errors.As(err, &first) {
			// Say why the run seems to stand still, then wait.
			f.Logger().Info(fmt.Sprintf("another eepipe run holds the lock file %s: %s; waiting up to %s (--lock-wait) for it", lockPath, first.Holder, o.LockWait))
			l, err = filelock.Acquire(ctx, lockPath, r.lockInfo(), o.LockWait)
		}
		if err != nil {
			return ctx, nil, r.lockError(err)
		}
		r.locks = append(r.locks, l)
	}
	r.removeOrphanTemps()
	if o.MaxDuration > 0 {
		ctx, r.cancel = context.WithTimeoutCause(ctx, o.MaxDuration, fmt.Errorf("%w %s", errMaxDuration, o.MaxDuration))
	} else {
		ctx, r.cancel = context.WithCancel(ctx)
	}
	return ctx, r, nil
}

// lockInfo describes this run to whoever finds one of its locks held.
func (r *scheduledRun) lockInfo() pipeline.LockInfo {
	cmd := strings.Join(append([]string{"eepipe", r.command}, r.args...), " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return pipeline.LockInfo{Since: r.stamp, Command: cmd}
}

// lockError turns a failure to take a lock into the command's error: a
// held lock is fatal (exit 3) with the holder in the message, printed
// before the summary line so that the summary stays the run's last line.
func (r *scheduledRun) lockError(err error) error {
	var held *pipeline.LockHeldError
	if errors.As(err, &held) {
		printError(r.f.IO.ErrOut, fmt.Errorf("%w; %s", err, lockWaitHint(held)))
		r.logSummary(ExitFatal, "locked", []zap.Field{zap.String("lock", held.What), zap.Int("lock_pid", held.Holder.PID)})
		return silentExit(ExitFatal)
	}
	return exitf(ExitFatal, "%v", err)
}

// lockWaitHint ends the refusal of a held lock: how to wait for it.
func lockWaitHint(held *pipeline.LockHeldError) string {
	if held.Waited > 0 {
		return "or give a longer --lock-wait"
	}
	return "or give --lock-wait to wait for it"
}

// lockAccounts takes the accounts' local locks (pipeline.TakeAccountLocks
// decides the order and keys), each waiting up to --lock-wait. A held
// lock releases the ones taken and is fatal.
func (r *scheduledRun) lockAccounts(ctx context.Context, locker pipeline.Locker, locks []run.AccountLockName) error {
	taken, err := run.TakeAccountLocks(ctx, locker, locks, r.lockInfo(), r.opts.LockWait, func(l run.AccountLockName, first *pipeline.LockHeldError) {
		// Say why the run seems to stand still, then wait.
		r.f.Logger().Info(fmt.Sprintf("another eepipe run holds the lock of account %s: %s; waiting up to %s (--lock-wait) for it", l.Name, first.Holder, r.opts.LockWait))
	})
	r.locks = append(r.locks, taken...)
	if err == nil {
		return nil
	}
	r.releaseLocks()
	var held *pipeline.LockHeldError
	switch {
	case errors.As(err, &held):
		r.mu.Lock()
		r.outcome = "locked"
		r.mu.Unlock()
		return exitf(ExitFatal, "%v; %s", held, lockWaitHint(held))
	case ctx.Err() != nil:
		return err // interrupted while waiting: finish says so
	}
	return exitf(ExitFatal, "%v", err)
}

// releaseLocks releases the run's locks, the last taken first.
func (r *scheduledRun) releaseLocks() {
	for i := len(r.locks) - 1; i >= 0; i-- {
		if err := r.locks[i].Unlock(); err != nil {
			r.f.Logger().Warn("lock release", zap.Error(err))
		}
	}
	r.locks = nil
}

// outputPath returns where to write an output named base (or given as a
// path with -o): in --output-dir with a UTC stamp, else the path itself.
func (r *scheduledRun) outputPath(base string) string {
	if r.opts.OutputDir == "" {
		return base
	}
	return filepath.Join(r.opts.OutputDir, formats.StampedName(filepath.Base(base), r.stamp))
}

// wrote records an output file written and prunes older stamped files of
// the same name when --keep is given.
func (r *scheduledRun) wrote(path, base string) {
	r.mu.Lock()
	r.outputs = append(r.outputs, path)
	r.mu.Unlock()
	if r.opts.OutputDir == "" || r.opts.Keep <= 0 {
		return
	}
	removed, err := formats.PruneStamped(r.opts.OutputDir, filepath.Base(base), r.opts.Keep)
	if err != nil {
		r.f.Logger().Warn("pruning old outputs failed", zap.Error(err))
	}
	r.mu.Lock()
	r.pruned = append(r.pruned, removed...)
	r.mu.Unlock()
	for _, p := range removed {
		r.f.Logger().Info("pruned old output", zap.String("file", p))
	}
}

// setOutcome sets the outcome the summary line gives, for a run that ended
// for a reason the exit code does not tell ("locked", "lock_lost").
func (r *scheduledRun) setOutcome(o string) {
	r.mu.Lock()
	r.outcome = o
	r.mu.Unlock()
}

// couldNotCompare records that n plans could not be compared, for the
// summary line ("2 plans could not be compared").
func (r *scheduledRun) couldNotCompare(n int) {
	r.mu.Lock()
	r.notCompared = n
	r.mu.Unlock()
}

// warn logs a warning now and repeats it in the summary line.
func (r *scheduledRun) warn(msg string, fields ...zap.Field) {
	r.f.Logger().Warn(msg, fields...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = appendUnique(r.warnings, msg)
}

// timedOut reports whether ctx ended because --max-duration passed.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errMaxDuration)
}

// finish releases the lock, writes the summary line and returns the error
// the command should return: err as given, except that a run stopped by
// --max-duration or by a signal exits 3.
func (r *scheduledRun) finish(ctx context.Context, err error, fields ...zap.Field) error {
	defer r.cancel()
	r.releaseLocks()
	code := exitCodeOf(err)
	outcome := outcomeOf(code)
	var held *pipeline.StoreLockHeldError
	if errors.As(err, &held) {
		outcome = "locked" // a lock of the state store: as the local lock
	}
	r.mu.Lock()
	if r.outcome != "" {
		outcome = r.outcome
	}
	r.mu.Unlock()
	switch {
	case timedOut(ctx):
		outcome = "timeout"
		if code != ExitInvalid {
			// The message names the limit, whatever stopped first.
			limit := fmt.Sprintf("stopped after --max-duration %s", r.opts.MaxDuration)
			switch {
			case err == nil || code != ExitFatal || isSilent(err):
				err = &ExitError{Code: ExitFatal, Err: fmt.Errorf("%s: no new work was started after that", limit)}
			case !strings.Contains(err.Error(), "--max-duration"):
				err = &ExitError{Code: ExitFatal, Err: fmt.Errorf("%s: %w", limit, err)}
			}
			code = ExitFatal
		}
	case ctx.Err() != nil && code != ExitInvalid:
		outcome = "interrupted"
		code = ExitFatal
		if err == nil {
			err = exitf(ExitFatal, "interrupted")
		}
	}
	// The error's message is printed before the summary, so that the
	// summary is the run's last line on stderr for monitoring; a run that
	// failed with its report already told logs its cause at level error.
	if err != nil && !isSilent(err) {
		printError(r.f.IO.ErrOut, err)
	} else if summaryLevel(outcome, false) == zap.ErrorLevel && !r.f.consoleLogs() {
		cause := exitCause(err)
		if cause == nil {
			cause = errors.New(runOutcomeWords(outcome))
		}
		r.f.Logger().Error(cause.Error(), zap.String("command", r.command), zap.String("outcome", outcome))
	}
	r.logSummary(code, outcome, fields)
	if err != nil {
		return silentExit(code)
	}
	return nil
}

// logSummary ends the run's stderr with its summary: off a terminal (and
// with --log-format json) one JSON event with every field, for monitoring;
// where the logs are for people (console), a sentence (humanSummary).
func (r *scheduledRun) logSummary(code int, outcome string, fields []zap.Field) {
	if r.f.consoleLogs() {
		r.mu.Lock()
		line := humanSummary(r.command, outcome, code, r.notCompared, time.Since(r.start), r.outputs, r.warnings)
		r.mu.Unlock()
		fmt.Fprintln(r.f.IO.ErrOut, line)
		return
	}
	r.mu.Lock()
	all := []zap.Field{
		zap.String("command", r.command),
		zap.String("outcome", outcome),
		zap.Int("exit_code", code),
		zap.Float64("elapsed_seconds", time.Since(r.start).Seconds()),
	}
	all = append(all, fields...)
	if len(r.outputs) > 0 {
		all = append(all, zap.Strings("outputs", r.outputs))
	}
	if len(r.pruned) > 0 {
		all = append(all, zap.Strings("pruned", r.pruned))
	}
	warnings := append([]string(nil), r.warnings...)
	r.mu.Unlock()
	all = append(all, zap.Strings("warnings", warnings))
	if ce := r.f.Logger().Check(summaryLevel(outcome, len(warnings) > 0), "summary"); ce != nil {
		ce.Write(all...)
	}
}

// summaryLevel is the level of a run's summary event, by its outcome
// (docs/scheduling.md): info for ok, warn for ok with warnings and for
// differences (exit 1), error for a run that did not do its job (invalid
// input, fatal, locked, lock lost, timeout, interrupted).
func summaryLevel(outcome string, warned bool) zapcore.Level {
	switch outcome {
	case "ok":
		if warned {
			return zap.WarnLevel
		}
		return zap.InfoLevel
	case "differences":
		return zap.WarnLevel
	}
	return zap.ErrorLevel
}

// humanSummary words a run's end for a person: what became of it, how
// long it took, the files it wrote and how many warnings it printed:
// "eepipe export: done in 2.4s; wrote out/plans.xlsx". A diff or
// reconcile that could not compare notCompared plans says so instead of
// "done, with differences".
func humanSummary(command, outcome string, code, notCompared int, elapsed time.Duration, outputs, warnings []string) string {
	words := runOutcomeWords(outcome)
	if outcome == "differences" && notCompared > 0 {
		words = pipeline.Plural(notCompared, "plan") + " could not be compared"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "eepipe %s: %s in %s", command, words, elapsed.Round(100*time.Millisecond))
	if code != ExitOK {
		fmt.Fprintf(&b, " (exit %d)", code)
	}
	if len(outputs) > 0 {
		fmt.Fprintf(&b, "; wrote %s", strings.Join(outputs, ", "))
	}
	if len(warnings) > 0 {
		// Counted, not repeated: each warning is printed once, above.
		fmt.Fprintf(&b, "; %s (above)", pipeline.Plural(len(warnings), "warning"))
	}
	return b.String()
}

// runOutcomeWords words a run's outcome for people: "done", "failed", ...
func runOutcomeWords(outcome string) string {
	words := map[string]string{
		"ok": "done", "differences": "done, with differences", "invalid": "stopped: invalid input",
		"fatal": "failed", "timeout": "stopped by --max-duration", "interrupted": "interrupted", "locked": "not run: another run holds the lock",
	}[outcome]
	if words == "" {
		words = outcome
	}
	return words
}

// isSilent reports whether err is an exit code without a message.
func isSilent(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.Err == nil
}

// exitCodeOf returns the exit code an error maps to.
func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if isUsageError(err) {
		return ExitInvalid
	}
	return ExitFatal
}

func outcomeOf(code int) string {
	switch code {
	case ExitOK:
		return "ok"
	case ExitDiff:
		return "differences"
	case ExitInvalid:
		return "invalid"
	}
	return "fatal"
}

// keyExpiryWarning words a key-expiry notice (docs/scheduling.md, key expiry) for the
// logs and the summary line.
func keyExpiryWarning(account, expires, in string) string {
	who := "the API key"
	if account != "" {
		who = "the API key of account " + account
	}
	when := "in " + in
	if expires != "" {
		when += " (" + expires + ")"
	}
	return fmt.Sprintf("%s expires %s: ask for a new key pair before scheduled runs start failing", who, when)
}

// noteKeyExpiry repeats in the run's summary the key-expiry warnings
// (docs/scheduling.md, key expiry) that the responses of each account's client carried.
func (r *scheduledRun) noteKeyExpiry(accounts []pipeline.Account, clients []*apiclient.Client) {
	for i, cl := range clients {
		expires, in, ok := cl.KeyExpiry()
		if !ok {
			continue
		}
		name := ""
		if i < len(accounts) && !(len(accounts) == 1 && accounts[0].Name == "default") {
			name = accounts[i].Name
		}
		r.mu.Lock()
		r.warnings = appendUnique(r.warnings, keyExpiryWarning(name, expires, in))
		r.mu.Unlock()
	}
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
