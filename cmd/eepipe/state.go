package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// envState names the state store in the environment (over state: in the file).
const envState = "EEPIPE_STATE"

// stateFlags are the state store flags of apply, diff, reconcile and history.
type stateFlags struct {
	Path      string // --state: an SQLite file or a postgres:// URL
	NoState   bool   // --no-state
	Overwrite bool   // --overwrite-service-changes (apply, diff)
	Output    string // -o FILE: diff writes the saved change set
	SignWith  string // --sign-with FILE: diff -o signs the set off with this signer's key
	// signer is the key of SignWith, read by checkApplyOptions.
	signer *savedset.SignerKey
}

// register adds --state and --no-state; with write (apply, diff) also
// --overwrite-service-changes. apply's --lock-wait (schedule.go) also
// bounds the wait for an account's lock in a PostgreSQL store.
func (sf *stateFlags) register(cmd *cobra.Command, write bool) {
	sf.registerPath(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&sf.NoState, "no-state", false, "neither read nor record run history (nothing protects service-side changes)")
	if write {
		fl.BoolVar(&sf.Overwrite, "overwrite-service-changes", false, "write counters and plan fields changed on the service since eepipe last wrote them (and conflicts)")
	}
}

// registerPath adds --state alone: history, which only reads the store,
// has no --no-state to offer.
func (sf *stateFlags) registerPath(cmd *cobra.Command) {
	cmd.Flags().StringVar(&sf.Path, "state", "", "the state store: an SQLite `FILE` or a postgres:// URL (default: state: in the configuration, "+
		envState+", else $XDG_STATE_HOME/eepipe/state.db)")
}

// resolveStateConfig sets cfg.State from the environment or the file (a
// relative file path is relative to the configuration's folder). A
// password in the file's URL is refused: secrets never go in the file.
func resolveStateConfig(cfg *Config, envVal, fileVal, configDir string) error {
	if fileVal != "" && statestore.IsPostgres(fileVal) {
		if u, err := url.Parse(fileVal); err == nil {
			if _, has := u.User.Password(); has || u.Query().Has("password") {
				return fmt.Errorf("state: the PostgreSQL URL holds a password; secrets never go in the configuration file: " +
					"leave it out and set PGPASSWORD, or use ~/.pgpass")
			}
		}
	}
	if fileVal != "" && !statestore.IsPostgres(fileVal) && !filepath.IsAbs(fileVal) {
		fileVal = filepath.Join(configDir, fileVal)
	}
	cfg.State = first(envVal, fileVal)
	return nil
}

// openState opens the run's state store: --state, else the configuration,
// else the default SQLite file. With --no-state it warns and returns nil.
// A store named in a folder that does not exist is refused (exit 2,
// checkStateFolder). readOnly (diff, reconcile, history) never creates
// a store: an SQLite file that does not exist is no history, said in a
// warning, and nil is returned; apply says that the store it creates is
// new. Any other failure is fatal (exit 3) and happens before any request.
// A PostgreSQL store's schema upgrade by another run is waited for up to
// o.LockWait (--lock-wait); o.Writers is how many plans the run records
// at once (--concurrency).
func openState(ctx context.Context, f *Factory, cfg *Config, sf *stateFlags, o statestore.Options, readOnly bool) (*statestore.Store, error) {
	log := f.Logger()
	if sf.NoState {
		log.Warn("--no-state: no run history is read or recorded; counters and plan fields changed on the service are NOT protected from being overwritten")
		return nil, nil
	}
	if err := checkStateFolder(f, cfg, sf); err != nil {
		return nil, err
	}
	loc, err := stateLocation(cfg, sf)
	if err != nil {
		return nil, err
	}
	if !statestore.IsPostgres(loc) {
		if _, serr := os.Stat(loc); errors.Is(serr, fs.ErrNotExist) {
			if readOnly {
				log.Warn(fmt.Sprintf("there is no state store at %s, so there is no run history to compare with: every change counts as having no history "+
					"(no last applied value is shown and nothing is held back as changed on the service); nothing was created "+
					"(apply creates the store when it records its first run; --state, %s or state: in the configuration name another)", loc, envState))
				return nil, nil
			}
			log.Warn(fmt.Sprintf("the state store %s does not exist: this run creates it, with no history, so changes made on the service to plans "+
				"that already exist cannot be told apart from the file's (if this is not the store you meant, stop and give the right one with --state, %s or state: in the configuration)",
				loc, envState))
		}
	}
	st, err := statestore.OpenWith(ctx, loc, o)
	if err != nil {
		var held *pipeline.StoreLockHeldError
		if errors.As(err, &held) {
			return nil, exitf(ExitFatal, "%w; nothing was sent", err)
		}
		return nil, exitf(ExitFatal, "%w; nothing was sent (--no-state runs without history)", err)
	}
	log.Debug("state store", zap.String("store", st.Where()))
	return st, nil
}

// checkStateFolder refuses (exit 2) a state store named by --state,
// EEPIPE_STATE or state: in the configuration (cfg nil: the flag and the
// environment only) whose folder does not exist, in the words of every
// output file's check (refuseMissingFolder): a mistyped path must not
// start an empty history. The default store's folder is created.
func checkStateFolder(f *Factory, cfg *Config, sf *stateFlags) error {
	if sf.NoState {
		return nil
	}
	env := strings.TrimSpace(f.Getenv(envState))
	var from, loc string
	switch {
	case sf.Path != "":
		from, loc = "--state", sf.Path
	case env != "":
		from, loc = envState, env
	case cfg != nil && cfg.State != "":
		from, loc = "state:", cfg.State
	}
	if loc == "" || statestore.IsPostgres(loc) {
		return nil
	}
	return refuseMissingFolder(from, filepath.Clean(loc), "")
}

// stateLocation is where the run's state store is: --state, else the
// configuration (or EEPIPE_STATE), else the default SQLite file.
func stateLocation(cfg *Config, sf *stateFlags) (string, error) {
	if loc := first(sf.Path, cfg.State); loc != "" {
		return loc, nil
	}
	p, err := statestore.DefaultPath()
	if err != nil {
		return "", exitf(ExitFatal, "%v", err)
	}
	return p, nil
}

// serviceKey is the service the run talks to, as the state store knows it:
// one service however its base URL is spelled, under the address
// same_service_as declares when the configuration declares one.
func serviceKey(cfg *Config) string { return cfg.address().Key() }

// address is where the configuration reaches the service and the address
// its history is kept under (same_service_as).
func (c *Config) address() pipeline.ServiceAddress {
	return pipeline.ServiceAddress{BaseURL: c.BaseURL, SameAs: c.SameServiceAs}
}

// checkServiceHistory stops the run (exit 2, nothing sent) when a
// configured account's key pair has its history in st under another
// address of the service than this configuration's
// (pipeline.ServiceAddress.CheckHistory). apply checks before it reads
// the files and again under the accounts' locks, before it records the
// run (which records the address of the key pairs that have none). With
// warn (the run, at its first check) a store whose history is all under
// other addresses, none of this configuration's key pairs' on record, is
// warned of (ServiceAddress.OtherHistory).
func checkServiceHistory(ctx context.Context, st *statestore.Store, cfg *Config, warn *scheduledRun) error {
	if st == nil {
		return nil
	}
	l := accountLocks(cfg)
	var keys []string
	for _, a := range l.Accounts {
		if a.APIKey != "" {
			keys = append(keys, pipeline.AccountLockKey(a.APIKey))
		}
	}
	recorded, err := st.KeyServices(ctx, keys)
	if err != nil {
		return exitf(ExitFatal, "%v; nothing was sent", err)
	}
	if err := cfg.address().CheckHistory(l.Accounts, recorded); err != nil {
		return exitf(ExitInvalid, "%v; nothing was sent", err)
	}
	if warn == nil {
		return nil
	}
	services, err := st.RunServices(ctx)
	if err != nil {
		return exitf(ExitFatal, "%v; nothing was sent", err)
	}
	if w := cfg.address().OtherHistory(l.Accounts, recorded, services); w != "" {
		warn.warn(w)
	}
	return nil
}

// holdBack is the run's three-way rule (diff.HoldBack) over the
// state store st (nil: no history).
func holdBack(st *statestore.Store, cfg *Config, overwrite bool) diff.HoldBack {
	h := diff.HoldBack{Service: serviceKey(cfg), Overwrite: overwrite}
	if st != nil {
		h.Source = st
	}
	return h
}

// classify classifies the change set's counters against the store and
// holds back the service-side changes unless --overwrite-service-changes.
func classify(ctx context.Context, st *statestore.Store, cfg *Config, cs *diff.ChangeSet, sf *stateFlags) ([]diff.HeldChange, error) {
	held, err := holdBack(st, cfg, sf.Overwrite).ChangeSet(ctx, cs)
	if err != nil {
		return nil, exitf(ExitFatal, "%v", err)
	}
	return held, nil
}

// lockStoreNames takes the store's lock of the named accounts
// (run.AccountLocks.LockStore decides which, under which key, in
// which order).
func lockStoreNames(ctx context.Context, st *statestore.Store, cfg *Config, names []string, wait time.Duration) (func(), error) {
	release, err := accountLocks(cfg).LockStore(ctx, st, names, holderName(), wait)
	if err != nil {
		return nil, exitf(ExitFatal, "%w; nothing was sent", err)
	}
	return release, nil
}

// storeLockCheck returns the check of the state store's account locks run
// before every write (run.AccountLocks.CheckStore); nil when the
// store takes no locks (SQLite: the local lock covers one machine).
func storeLockCheck(st *statestore.Store, cfg *Config) func(context.Context) error {
	if st == nil || !st.Postgres() {
		return nil
	}
	return accountLocks(cfg).CheckStore(st)
}

// holderName says who takes a lock: user@host (pid N, since TIME).
func holderName() string {
	u, h := currentUser(), hostName()
	return fmt.Sprintf("%s@%s (pid %d, eepipe apply started %s)", u, h, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return first(os.Getenv("USER"), "unknown")
}

func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// commandLine returns the command line with URLs' passwords removed.
func commandLine() string {
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		if i == 0 {
			a = filepath.Base(a)
		}
		if k, v, ok := strings.Cut(a, "="); ok && strings.Contains(v, "://") {
			a = k + "=" + redactURL(v)
		} else if strings.Contains(a, "://") {
			a = redactURL(a)
		}
		args[i] = a
	}
	return strings.Join(args, " ")
}

func redactURL(s string) string {
	if statestore.IsPostgres(s) {
		return statestore.Redact(s)
	}
	return pipeline.RedactedURL(s)
}

// inputFiles returns each input file with the SHA-256 of its content.
func inputFiles(paths []string) []pipeline.InputFile {
	out := make([]pipeline.InputFile, 0, len(paths))
	for _, p := range paths {
		out = append(out, pipeline.InputFile{Path: p, SHA256: fileSHA256(p)})
	}
	return out
}

func fileSHA256(path string) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// runRecord is the record of an apply in the state store: who ran it,
// where, against which service (the runner adds the accounts, the
// caller the files).
func runRecord(cfg *Config, started time.Time) pipeline.RunRecord {
	var keys []string
	for _, a := range cfg.Accounts {
		if a.APIKey != "" {
			keys = append(keys, pipeline.AccountLockKey(a.APIKey))
		}
	}
	return pipeline.RunRecord{Started: started, User: currentUser(), Host: hostName(), Command: commandLine(), Service: serviceKey(cfg), Keys: keys}
}

// demoState keeps the demo's run history in its output folder, away from
// the user's store.
func demoState(dir string) stateFlags { return stateFlags{Path: filepath.Join(dir, "state.db")} }

// demoLockDir keeps the demo's account locks in its output folder, away
// from the user's lock folder, as its run history (demoState): its key
// pairs are the sandbox's, and its runs never wait on the user's.
func demoLockDir(dir string) string { return filepath.Join(dir, "locks") }
