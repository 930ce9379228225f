package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/filelock"
	"github.com/eepipe/eepipe/pipeline/keyrotate"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/pipeline/statestore"
)

// keysRotateOptions are the options of `eepipe keys rotate`.
type keysRotateOptions struct {
	Account   string
	ExpiresIn string
	LockDir   string
	State     stateFlags
	Conn      connFlags

	HTTPClient *http.Client // tests
	// WriteFile writes a file atomically (nil: xlsx.WriteFileAtomic);
	// tests make it fail.
	WriteFile func(path string, write func(io.Writer) error) error
}

// NewCmdKeysRotate returns `eepipe keys rotate`. runF replaces the
// command's run function in tests.
func NewCmdKeysRotate(f *Factory, runF func(*keysRotateOptions) error) *cobra.Command {
	opts := &keysRotateOptions{}
	cmd := &cobra.Command{
		Use:   "rotate --account NAME [--expires-in 90d]",
		Short: "Replace an account's API key with a new one, then revoke the old key",
		Long: `Create a new key with the account's key, store it where the configuration
reads it, check it with a read, then revoke the old key with the new one
(docs/configuration.md, "API keys"):

- an api_secret_file is replaced (atomically, mode 0600); a secret from
  the environment is printed once on stdout, with the variable to set;
- the configuration file's api_key and api_key_id are changed in place,
  its comments and layout kept; a key from the environment is printed
  with the variable to set;
- the old key is revoked by its id: the configuration's api_key_id, or the
  id the state store kept when eepipe created the key. When neither knows
  it, the old key stays active: revoke it in the web application.

Whatever step fails, the configuration is left on a working key (the old
one until the new one passed its check) and the run says which key is
active. Two rotations of one account at once are refused (the account's
lock, as apply takes it). Secrets never appear in logs or messages.

Exit status 0 when the key was rotated and the old one revoked, 1 when
the new key is active but the old one is not revoked, 2 invalid usage or
configuration, 3 when the rotation failed (the old key is still active).`,
		Example: `  eepipe keys rotate --config eepipe.yaml --account acme --expires-in 90d`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runKeysRotate(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Account, "account", "", "the configured account whose key to rotate (required with several accounts)")
	fl.StringVar(&opts.ExpiresIn, "expires-in", "", "lifetime of the new key: 30d, 90d, 180d or 365d (default: never expires)")
	fl.StringVar(&opts.LockDir, "lock-dir", "", "folder of the account locks (default "+envLockDir+", else the user's state folder)")
	opts.State.register(cmd, false)
	opts.Conn.register(cmd)
	return cmd
}

func runKeysRotate(ctx context.Context, f *Factory, opts *keysRotateOptions) error {
	if err := keyrotate.CheckLifetime(opts.ExpiresIn); err != nil {
		return exitf(ExitInvalid, "%v", err)
	}
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Keys: true})
	if err != nil {
		return err
	}
	log := f.Logger()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	a, err := rotatedAccount(cfg, opts.Account)
	if err != nil {
		return err
	}
	locks := &rotationLocks{}
	defer locks.release()
	if err := locks.take(ctx, f, opts, a, a.APIKey); err != nil {
		return exitf(ExitFatal, "keys rotate: %v; nothing was changed", err)
	}
	st, err := openState(ctx, f, cfg, &opts.State, statestore.Options{}, false)
	if err != nil {
		return err
	}
	rot := keyrotate.Rotation{Service: serviceKey(cfg), Account: a.Name, Old: keyrotate.Pair{Key: a.APIKey, Secret: a.APISecret},
		OldID: a.KeyID, ExpiresIn: opts.ExpiresIn, Now: f.Now,
		Config: &configSwitch{f: f, opts: opts, account: a,
			lockNew: func(key string) error { return locks.take(ctx, f, opts, a, key) }},
		Dial: func(p keyrotate.Pair) keyrotate.Service {
			k, _ := accountKeys(cfg, a, p.Key, p.Secret, log, opts.HTTPClient) // the pairs are never empty here
			return k
		}}
	if st != nil {
		defer st.Close()
		// One account, one history however the service is addressed: the
		// book and the new key's history are under the old key pair's.
		one := *cfg
		one.Accounts = []AccountConfig{a}
		if err := checkServiceHistory(ctx, st, &one, nil); err != nil {
			return err
		}
		rot.Book = st
		if st.Postgres() {
			// The team's lock of the account, across hosts, as apply takes it.
			unlock, err := lockStoreNames(ctx, st, cfg, []string{a.Name}, 0)
			if err != nil {
				return err
			}
			defer unlock()
		}
	}
	res, err := rot.Run(ctx)
	return rotationOutcome(f, a, res, err)
}

// rotatedAccount is the configured account --account names (the only one
// when there is one).
func rotatedAccount(cfg *Config, name string) (AccountConfig, error) {
	if name == "" {
		if len(cfg.Accounts) == 1 {
			return cfg.Accounts[0], nil
		}
		return AccountConfig{}, exitf(ExitInvalid, "keys rotate: name the account with --account (the configuration has %s)", pipeline.Plural(len(cfg.Accounts), "account"))
	}
	var names []string
	for _, a := range cfg.Accounts {
		if pipeline.SameAccount(a.Name, name) {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return AccountConfig{}, exitf(ExitInvalid, "keys rotate: no configured account is named %s (the configuration's: %s)", name, strings.Join(names, ", "))
}

// rotationLocks are the account locks a rotation holds (the ones apply
// takes, by key pair): the old key's from the start, and the new key's
// from before the configuration is switched to it, so that a rotation or
// an apply that reads the switched configuration is refused until this
// rotation has ended (revoked the old key or backed out).
type rotationLocks struct{ taken []pipeline.Unlocker }

// take takes the account's lock under key, without waiting; a lock held
// by another run is a *pipeline.LockHeldError.
func (l *rotationLocks) take(ctx context.Context, f *Factory, opts *keysRotateOptions, a AccountConfig, key string) error {
	dir := first(opts.LockDir, f.Getenv(envLockDir))
	if dir == "" {
		d, err := filelock.DefaultDir(f.Getenv)
		if err != nil {
			return err
		}
		dir = d
	}
	info := pipeline.LockInfo{Since: f.Now(), Command: "eepipe keys rotate --account " + a.Name}
	names := run.AccountLocks{Accounts: []pipeline.LockAccount{{Name: a.Name, APIKey: key}}}.Local(nil)
	taken, err := run.TakeAccountLocks(ctx, filelock.Dir{Path: dir}, names, info, 0, nil)
	l.taken = append(l.taken, taken...)
	return err
}

// release releases the locks, the last taken first.
func (l *rotationLocks) release() {
	for i := len(l.taken) - 1; i >= 0; i-- {
		_ = l.taken[i].Unlock()
	}
	l.taken = nil
}

// rotationOutcome reports the rotation's end on stderr and returns the
// exit status: which key is active, whether the old one was revoked, and
// what is left to do.
func rotationOutcome(f *Factory, a AccountConfig, res keyrotate.Result, err error) error {
	w := f.IO.ErrOut
	var re *keyrotate.Error
	if errors.As(err, &re) {
		fmt.Fprintf(w, "Key rotation of account %s failed: could not %s: %v\n", a.Name, re.Step, re.Err)
		for _, n := range re.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
		fmt.Fprintf(w, "The active key of account %s is %s.\n", a.Name, re.Active)
		if re.Partial() {
			return silentExit(ExitDiff)
		}
		return silentExit(ExitFatal)
	}
	if err != nil {
		return exitf(ExitFatal, "key rotation of account %s: %v; the active key is %s", a.Name, err, res.Active)
	}
	exp := "never expires"
	if res.New.ExpiresAt != "" {
		exp = "expires " + res.New.ExpiresAt
	}
	fmt.Fprintf(w, "Key of account %s rotated: the active key is %s (id %d, %s).\n", a.Name, res.Active, res.New.ID, exp)
	for _, n := range res.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	if !res.OldRevoked {
		return silentExit(ExitDiff)
	}
	fmt.Fprintf(w, "The old key %s (id %d) was revoked.\n", keyrotate.Mask(a.APIKey), res.OldID)
	return nil
}

// configSwitch is keyrotate.Config over the configuration file, the
// account's secret file and the person (for what lives in the
// environment).
type configSwitch struct {
	f       *Factory
	opts    *keysRotateOptions
	account AccountConfig
	// lockNew takes the account's lock under the new key before the
	// configuration holds it (rotationLocks).
	lockNew func(key string) error
	// switched is the new pair once Switch succeeded, for Current.
	switched *keyrotate.Created
}

// Switch writes the new secret to the api_secret_file and the new key
// and its id into the configuration file (both replaced atomically); what
// comes from the environment is printed on stdout, once, with the
// variable to set.
func (s *configSwitch) Switch(_ context.Context, c keyrotate.Created) ([]string, func() error, error) {
	from := s.account.From
	var notes []string
	if err := s.lockNew(c.Key); err != nil {
		return nil, nil, err
	}
	var undos []func() error
	undo := func() error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			errs = append(errs, undos[i]())
		}
		return errors.Join(errs...)
	}
	if from.SecretFile != "" {
		u, err := s.replace(from.SecretFile, []byte(c.Secret+"\n"))
		if err != nil {
			return nil, nil, fmt.Errorf("the secret file: %w", err)
		}
		undos = append(undos, u)
	}
	if from.KeyEnv == "" && from.FileIndex >= 0 {
		if err := s.switchFileKey(c, &undos); err != nil {
			return nil, nil, errors.Join(err, undo())
		}
	}
	out := s.f.IO.Out
	// What the environment already holds (a repair back to the key
	// pair it reads) is not printed again.
	if from.KeyEnv != "" && c.Key != s.account.APIKey {
		fmt.Fprintf(out, "%s=%s\n", from.KeyEnv, c.Key)
		notes = append(notes, fmt.Sprintf("set %s to the new key printed on stdout wherever eepipe runs", from.KeyEnv))
	}
	if from.SecretEnv != "" && c.Secret != s.account.APISecret {
		fmt.Fprintf(out, "%s=%s\n", from.SecretEnv, c.Secret)
		notes = append(notes, fmt.Sprintf("set %s to the new secret printed on stdout wherever eepipe runs (it is shown this once only); until then runs with this configuration are refused", from.SecretEnv))
	}
	s.switched = &c
	return notes, func() error { s.switched = nil; return undo() }, nil
}

// switchFileKey sets the account's api_key and api_key_id in the
// configuration file.
func (s *configSwitch) switchFileKey(c keyrotate.Created, undos *[]func() error) error {
	path := s.f.ConfigPath
	b, err := readSmallRegularFile(path)
	if err != nil {
		return fmt.Errorf("the configuration: %w", err)
	}
	edited, err := keyrotate.SetAccountKey(b, s.account.From.FileIndex, c.Key, c.ID)
	if err != nil {
		return fmt.Errorf("the configuration %s: %w", path, err)
	}
	u, err := s.replace(path, edited)
	if err != nil {
		return fmt.Errorf("the configuration: %w", err)
	}
	*undos = append(*undos, u)
	return nil
}

// replace writes b to path atomically and returns the undo that puts the
// old content back.
func (s *configSwitch) replace(path string, b []byte) (func() error, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	put := func(content []byte) error {
		return s.writeWith(path, func(w io.Writer) error { _, err := io.Copy(w, bytes.NewReader(content)); return err })
	}
	if err := put(b); err != nil {
		return nil, err
	}
	return func() error { return put(old) }, nil
}

// writeWith writes path atomically through write: opts.WriteFile, by
// default xlsx.WriteFileAtomic.
func (s *configSwitch) writeWith(path string, write func(io.Writer) error) error {
	if s.opts.WriteFile != nil {
		return s.opts.WriteFile(path, write)
	}
	return xlsx.WriteFileAtomic(path, write)
}

// Current reads the configuration back as a run would, with the new pair
// in the variables of the environment it was told to set.
func (s *configSwitch) Current() (keyrotate.Pair, error) {
	g := *s.f
	from, c := s.account.From, s.switched
	g.Getenv = func(k string) string {
		if c != nil && k == from.KeyEnv {
			return c.Key
		}
		if c != nil && k == from.SecretEnv {
			return c.Secret
		}
		return s.f.Getenv(k)
	}
	g.IO = &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	cfg, err := loadConfig(&g, s.opts.Conn, configNeeds{Keys: true})
	if err != nil {
		return keyrotate.Pair{}, err
	}
	a, err := rotatedAccount(cfg, s.account.Name)
	if err != nil {
		return keyrotate.Pair{}, err
	}
	return keyrotate.Pair{Key: a.APIKey, Secret: a.APISecret}, nil
}
