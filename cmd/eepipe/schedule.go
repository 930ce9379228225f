package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
)

// lockFileName is the lock file a run takes in its output folder.
const lockFileName = ".eepipe.lock"

// errMaxDuration is the cause of a run's context when --max-duration passed.
var errMaxDuration = errors.New("the run took longer than --max-duration")

// scheduleOptions are the flags that make a command safe to run unattended:
// stamped outputs in a folder, pruning, a lock and a time bound.
type scheduleOptions struct {
	OutputDir   string
	Keep        int
	LockPath    string
	MaxDuration time.Duration
}

// addScheduleFlags registers --output-dir, --keep, --lock and --max-duration.
func addScheduleFlags(fs *pflag.FlagSet, o *scheduleOptions) {
	fs.StringVar(&o.OutputDir, "output-dir", "", "write outputs into `DIR` with UTC-stamped names (NAME-2026-11-22T0300Z.EXT); takes DIR/"+lockFileName)
	fs.IntVar(&o.Keep, "keep", 0, "with --output-dir: keep only the newest `N` stamped files of the same name (0 keeps all)")
	fs.StringVar(&o.LockPath, "lock", "", "lock `FILE` that stops overlapping runs (default: "+lockFileName+" in --output-dir)")
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
	if o.MaxDuration < 0 {
		return exitf(ExitInvalid, "--max-duration must be positive, not %s", o.MaxDuration)
	}
	return nil
}

// scheduledRun is one run of a command: its context (bounded by
// --max-duration), its lock, the warnings to repeat in the summary and the
// summary line itself.
type scheduledRun struct {
	f       *Factory
	opts    *scheduleOptions
	command string
	start   time.Time // wall clock, for elapsed
	stamp   time.Time // f.Now(), for output names
	lock    *formats.Lock
	cancel  context.CancelFunc

	mu       sync.Mutex
	warnings []string
	outputs  []string
	pruned   []string
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
		l, err := formats.AcquireLock(lockPath, formats.LockInfo{Since: r.stamp, Command: "eepipe " + command})
		if err != nil {
			var held *formats.LockHeldError
			if errors.As(err, &held) {
				// The message first: the summary is the run's last line.
				printError(f.IO.ErrOut, err)
				r.logSummary(ExitFatal, "locked", []zap.Field{zap.String("lock", lockPath), zap.Int("lock_pid", held.Holder.PID)})
				return ctx, nil, silentExit(ExitFatal)
			}
			return ctx, nil, exitf(ExitFatal, "%v", err)
		}
		r.lock = l
		if prev := l.TookOver(); prev != nil {
			fields := []zap.Field{zap.String("lock", lockPath), zap.Int("stale_pid", prev.PID)}
			if !prev.Since.IsZero() {
				fields = append(fields, zap.Time("stale_since", prev.Since))
			}
			f.Logger().Warn("took over a stale lock: its process is gone", fields...)
		}
	}
	if o.MaxDuration > 0 {
		ctx, r.cancel = context.WithTimeoutCause(ctx, o.MaxDuration, errMaxDuration)
	} else {
		ctx, r.cancel = context.WithCancel(ctx)
	}
	return ctx, r, nil
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
	if r.lock != nil {
		if rerr := r.lock.Release(); rerr != nil {
			r.f.Logger().Warn("lock release", zap.Error(rerr))
		}
	}
	code := exitCodeOf(err)
	outcome := outcomeOf(code)
	switch {
	case timedOut(ctx):
		outcome = "timeout"
		if code != ExitInvalid {
			if err == nil || code != ExitFatal || isSilent(err) {
				err = &ExitError{Code: ExitFatal, Err: fmt.Errorf("stopped after --max-duration %s: no new work was started after that", r.opts.MaxDuration)}
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
	// summary is the run's last line on stderr for monitoring.
	if err != nil && !isSilent(err) {
		printError(r.f.IO.ErrOut, err)
	}
	r.logSummary(code, outcome, fields)
	if err != nil {
		return silentExit(code)
	}
	return nil
}

func (r *scheduledRun) logSummary(code int, outcome string, fields []zap.Field) {
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
	log := r.f.Logger()
	if len(warnings) > 0 {
		log.Warn("summary", all...)
		return
	}
	log.Info("summary", all...)
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

// keyExpiryWarning words a key-expiry notice (contract-notes A2) for the
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
// (contract-notes A2) that the responses of each account's client carried.
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
