package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// Exit codes, documented in README.md.
const (
	ExitOK      = 0 // everything done, or no differences
	ExitDiff    = 1 // differences found, or some plans failed
	ExitInvalid = 2 // invalid input or usage
	ExitFatal   = 3 // fatal: authentication, unreachable service, interrupted, lock held
)

// ExitError carries the exit code a command wants. A command that returns
// an error of another type exits ExitFatal.
type ExitError struct {
	Code int
	Err  error // printed on stderr when not nil
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// exitf returns an ExitError with a formatted message.
func exitf(code int, format string, args ...any) *ExitError {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// silentExit returns an ExitError that prints nothing (the command already reported).
func silentExit(code int) *ExitError { return &ExitError{Code: code} }

// IOStreams are the command's standard streams: data to Out, status to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	OutTTY bool // Out is a terminal
	ErrTTY bool // ErrOut is a terminal: progress bars and console logs
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// Factory holds what every command needs, injected so that commands are
// tested without a terminal, a clock or the process environment.
type Factory struct {
	IO     *IOStreams
	Now    func() time.Time
	Getenv func(string) string

	// Global flags.
	ConfigPath  string
	CatalogPath string
	Verbose     bool
	LogFormat   string

	logger *zap.Logger
}

// Logger returns the run's logger: console format on a terminal, JSON
// otherwise, on ErrOut.
func (f *Factory) Logger() *zap.Logger {
	if f.logger == nil {
		f.logger = newLogger(f.IO.ErrOut, f.IO.ErrTTY, f.Verbose, f.LogFormat)
	}
	return f.logger
}

func newLogger(w io.Writer, tty, verbose bool, format string) *zap.Logger {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	var enc zapcore.Encoder
	if format == "console" || (format != "json" && tty) {
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05")
		if tty {
			cfg.EncodeLevel = zapcore.CapitalColorLevelEncoder
		}
		enc = zapcore.NewConsoleEncoder(cfg)
	} else {
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), level))
}

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// NewCmdRoot returns the eepipe command with every subcommand.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "eepipe",
		Short: "Move Employment Equity plan targets between workbooks and the B-BBEE compliance service",
		Long: `eepipe reads Employment Equity plan targets from XLSX and CSV workbooks,
validates them, and creates or patches plans on the B-BBEE compliance
service; it exports plans back to workbooks, reconciles a workbook against
the service, checks plans against the 2025 sectoral targets, and emulates
the service locally (eepipe sandbox).

Exit codes: 0 ok, 1 differences or partial failure, 2 invalid input or
usage, 3 fatal.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	pf := root.PersistentFlags()
	pf.StringVar(&f.ConfigPath, "config", "", "configuration file (YAML) with the service URL and accounts")
	pf.StringVar(&f.CatalogPath, "catalog", "", "counter catalog file (one counter name a line, or a JSON array)")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "debug logging (secrets are redacted)")
	pf.StringVar(&f.LogFormat, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console or json")

	root.AddCommand(
		NewCmdVersion(f),
		NewCmdSandbox(f, nil),
		NewCmdValidate(f, nil),
		NewCmdTemplate(f, nil),
		NewCmdApply(f, nil),
		NewCmdDiff(f, nil),
		NewCmdRecalc(f, nil),
		NewCmdCompanies(f, nil),
		NewCmdDemo(f, nil),
		NewCmdExport(f, nil),
		NewCmdReconcile(f, nil),
		NewCmdCheck(f, nil),
		NewCmdHistory(f, nil),
	)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitInvalid, Err: err}
	})
	return root
}

// NewCmdVersion returns `eepipe version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the eepipe version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(f.IO.Out, "eepipe %s\n", versionString())
			return nil
		},
	}
}

// Main runs eepipe with args and returns the exit code. SIGINT and SIGTERM
// cancel the command's context.
func Main(args []string, io *IOStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels the context: commands stop dispatching,
	// finish what is in flight and write their reports. Restoring the
	// default handling then lets a second Ctrl-C end the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	f := &Factory{IO: io, Now: time.Now, Getenv: os.Getenv}
	return Execute(ctx, f, args)
}

// Execute runs the root command with args and maps its error to an exit code.
func Execute(ctx context.Context, f *Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if f.logger != nil {
		_ = f.logger.Sync()
	}
	return reportExit(f.IO.ErrOut, err)
}

func reportExit(w io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(w, "eepipe: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(w, "eepipe: %v\n", err)
	if isUsageError(err) {
		return ExitInvalid
	}
	return ExitFatal
}

// isUsageError recognises cobra's argument and command errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
