package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// sandboxOptions are the options of `eepipe sandbox`.
type sandboxOptions struct {
	Listen         string
	FixturesPath   string
	Latency        time.Duration
	RecalcDuration time.Duration
	Faults         string
	Seed           int64
	WriteEnv       string // file to write the export lines to
	WriteConfig    string // file to write a configuration of every account to
	Account        string // account whose key pair the export lines set
}

// NewCmdSandbox returns `eepipe sandbox`. runF replaces the command's run function in tests.
func NewCmdSandbox(f *Factory, runF func(*sandboxOptions) error) *cobra.Command {
	opts := &sandboxOptions{}
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Serve an in-memory emulator of the compliance service and the company lookup",
		Long: `Serve an in-memory emulator of the B-BBEE compliance service on one address:
the plan and scorecard API under /api/public/v1 (HMAC-signed, scoped by API
key) and the company lookup under /api/companies (Basic authentication).
Use its URL as both the service base URL and the lookup URL.

State starts from a fixtures file (JSON with accounts, lookup_users,
companies and scorecards; default: the built-in example, the same as
testdata/sandbox-fixtures.json) and lives in memory until the sandbox stops.
Invalid fixtures stop it with a message naming the place; what it can serve
but you probably did not mean (a scorecard field a create would refuse, a
workforce counter outside the default catalog) is logged as a warning.

When ready it prints one line to stdout:
  eepipe sandbox listening on http://HOST:PORT
and logs to stderr. GET /_sandbox/stats (no authentication) returns what it
served: requests, writes, max_in_flight and by_route. SIGINT or SIGTERM stop
it cleanly.

Credentials: the fixtures' key pairs and the lookup user are the
sandbox's own test credentials. On a terminal it prints ready-to-paste
lines to stderr, and --write-env FILE writes them to FILE (mode 0600):
  export EEPIPE_BASE_URL='http://HOST:PORT'
  export EEPIPE_LOOKUP_URL='http://HOST:PORT'
  export EEPIPE_LOOKUP_USERNAME='...' EEPIPE_LOOKUP_PASSWORD='...'
  export EEPIPE_API_KEY='...' EEPIPE_API_SECRET='...'
with the key pair of --account (default: the first account) and the
other accounts' pairs as comments. Run ". FILE" in the shell that runs
eepipe. Off a terminal nothing but log lines goes to stderr.

--write-config FILE writes a configuration naming every account of the
fixtures (each with its company_id) and the lookup, for routing plans of
several companies: eepipe --config FILE diff clients/. Its secrets are
named by reference (api_secret_file, lookup.password_file), never inline:
they go to files of their own in a folder beside it (sandbox.yaml: the
folder sandbox-secrets/), all mode 0600.

--faults injects failures, each with a probability, for example
  --faults 503=0.05,429=0.03,reset=0.02,lost=0.02
503/429 (also 500, 502, 504) answer that status with Retry-After (seconds,
default 1, set with retry-after=N); reset drops the connection without an
answer; lost processes the request (a write is committed) and then drops the
connection. --seed makes the faults reproducible.`,
		Example: `  eepipe sandbox
  eepipe sandbox --write-env sandbox.env   # then, in another shell: . ./sandbox.env
  eepipe sandbox --write-config sandbox.yaml   # then: eepipe --config sandbox.yaml diff clients/
  eepipe sandbox --listen 127.0.0.1:0 --fixtures testdata/sandbox-fixtures.json
  eepipe sandbox --latency 50ms --faults 503=0.05,429=0.03,reset=0.02,lost=0.02 --seed 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSandbox(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	fl.StringVar(&opts.FixturesPath, "fixtures", "", "fixtures file (JSON); default: the built-in example")
	fl.DurationVar(&opts.Latency, "latency", 0, "every response leaves this long after its request arrived, e.g. 50ms")
	fl.DurationVar(&opts.RecalcDuration, "recalc-duration", 30*time.Second, "how long a scorecard recalculation runs (409 for that scorecard meanwhile)")
	fl.StringVar(&opts.Faults, "faults", "", "fault injection, e.g. 503=0.05,429=0.03,reset=0.02,lost=0.02")
	fl.Int64Var(&opts.Seed, "seed", 0, "seed of the fault generator (0: a random seed, logged)")
	fl.StringVar(&opts.WriteEnv, "write-env", "", "write export EEPIPE_... lines for the fixtures' credentials to this file (mode 0600)")
	fl.StringVar(&opts.WriteConfig, "write-config", "", "write a configuration `FILE` naming every account of the fixtures, its secrets in files beside it (FILE-secrets/, mode 0600)")
	fl.StringVar(&opts.Account, "account", "", "account whose key pair the export lines set (default: the first in the fixtures)")
	return cmd
}

func runSandbox(ctx context.Context, f *Factory, opts *sandboxOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Latency < 0 {
		return exitf(ExitInvalid, "--latency %s: must not be negative", opts.Latency)
	}
	if opts.RecalcDuration < 0 {
		return exitf(ExitInvalid, "--recalc-duration %s: must not be negative", opts.RecalcDuration)
	}
	if err := sandbox.ValidFaults(opts.Faults); err != nil {
		return exitf(ExitInvalid, "--faults %q: %v", opts.Faults, err)
	}
	if err := refuseMissingFolder("--write-env", opts.WriteEnv, ""); err != nil {
		return err
	}
	if err := refuseMissingFolder("--write-config", opts.WriteConfig, ""); err != nil {
		return err
	}
	source := "built-in example"
	fx := sandbox.DefaultFixtures()
	if opts.FixturesPath != "" {
		var err error
		if fx, err = sandbox.LoadFixtures(opts.FixturesPath); err != nil {
			return exitf(ExitInvalid, "%v", err)
		}
		source = opts.FixturesPath
	}
	account, err := pickAccount(fx, opts.Account)
	if err != nil {
		return exitf(ExitInvalid, "--account: %v", err)
	}
	log := f.Logger()
	srv, err := sandbox.Start(opts.Listen, sandbox.Options{
		Fixtures:       fx,
		Latency:        opts.Latency,
		RecalcDuration: opts.RecalcDuration,
		Faults:         opts.Faults,
		Seed:           opts.Seed,
		Logger:         log.Named("sandbox"),
		Now:            f.Now,
	})
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return exitf(ExitFatal, "%v: another program (or another eepipe sandbox) holds %s; stop it, or give --listen 127.0.0.1:0 for a free port (the ready line and --write-env say which)", err, opts.Listen)
		}
		return exitf(ExitFatal, "%v", err)
	}
	// The credentials are in place before the ready line.
	env := sandboxEnv(srv.URL, fx, account)
	if opts.WriteEnv != "" {
		if err := writePrivateFile(opts.WriteEnv, env); err != nil {
			_ = srv.Close()
			return exitf(ExitFatal, "--write-env: %v", err)
		}
	}
	if opts.WriteConfig != "" {
		if err := writeSandboxConfig(opts.WriteConfig, srv.URL, fx); err != nil {
			_ = srv.Close()
			return exitf(ExitFatal, "--write-config: %v", err)
		}
	}
	if f.IO.ErrTTY {
		// A terminal: the lines to paste (off a terminal stderr carries
		// log lines only).
		_, _ = io.WriteString(f.IO.ErrOut, env)
	}
	if _, err := fmt.Fprintf(f.IO.Out, "eepipe sandbox listening on %s\n", srv.URL); err != nil {
		_ = srv.Close()
		return exitf(ExitFatal, "sandbox: writing to stdout: %v", err)
	}
	accounts := make([]string, 0, len(fx.Accounts))
	for _, a := range fx.Accounts {
		accounts = append(accounts, a.Name+" ("+a.APIKey+")")
	}
	log.Info("sandbox ready",
		zap.String("url", srv.URL),
		zap.String("fixtures", source),
		zap.Strings("accounts", accounts),
		zap.Int("companies", len(fx.Companies)),
		zap.Int("scorecards", len(fx.Scorecards)),
		zap.String("latency", opts.Latency.String()),
		zap.String("recalc_duration", opts.RecalcDuration.String()),
		zap.String("env_file", opts.WriteEnv),
		zap.String("config_file", opts.WriteConfig),
		zap.String("faults", opts.Faults),
		zap.Int64("seed", srv.Sandbox.Seed()))

	<-ctx.Done()
	log.Info("sandbox stopping")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("sandbox: closing connections still in progress", zap.Error(err))
	}
	st := srv.Sandbox.Stats()
	log.Info("sandbox stopped", zap.Int64("requests", st.Requests), zap.Int64("writes", st.Writes), zap.Int64("max_in_flight", st.MaxInFlight))
	return nil
}

// pickAccount returns the fixtures' account named name, or the first when
// name is empty; nil when the fixtures have no account.
func pickAccount(fx *sandbox.Fixtures, name string) (*sandbox.Account, error) {
	if name == "" {
		if len(fx.Accounts) == 0 {
			return nil, nil
		}
		return &fx.Accounts[0], nil
	}
	var names []string
	for i := range fx.Accounts {
		if fx.Accounts[i].Name == name {
			return &fx.Accounts[i], nil
		}
		names = append(names, fx.Accounts[i].Name)
	}
	return nil, fmt.Errorf("the fixtures have no account %q (they have: %s)", name, strings.Join(names, ", "))
}

// sandboxEnv returns the shell lines that point eepipe at the sandbox with
// the key pair of account and the first lookup user; the other accounts'
// pairs follow as comments.
func sandboxEnv(url string, fx *sandbox.Fixtures, account *sandbox.Account) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# eepipe sandbox at %s: run \". FILE\" (or paste these lines) in the shell that runs eepipe.\n", url)
	fmt.Fprintf(&b, "export %s=%s\n", envBaseURL, shellQuote(url))
	fmt.Fprintf(&b, "export %s=%s\n", envLookupURL, shellQuote(url))
	if len(fx.LookupUsers) > 0 {
		u := fx.LookupUsers[0]
		fmt.Fprintf(&b, "export %s=%s %s=%s\n", envLookupUsername, shellQuote(u.Username), envLookupPassword, shellQuote(u.Password))
	}
	for _, a := range fx.Accounts {
		line := fmt.Sprintf("export %s=%s %s=%s", envAPIKey, shellQuote(a.APIKey), envAPISecret, shellQuote(a.Secret))
		label := "account " + a.Name
		if a.CompanyID != "" {
			label += ", company " + a.CompanyID
		}
		if account != nil && a.Name == account.Name {
			fmt.Fprintf(&b, "%s  # %s\n", line, label)
		} else {
			fmt.Fprintf(&b, "# %s  # %s\n", line, label)
		}
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writePrivateFile writes content to path readable by its owner only,
// through a temporary file in the same folder renamed into place.
func writePrivateFile(path, content string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.WriteString(tmp, content); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
