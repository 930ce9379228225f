package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// versionString is what --version and `eepipe version` print after
// "eepipe ": the module version (or the -ldflags one), then the VCS
// revision and commit time the build recorded (docs/commands/eepipe_version.md);
// "dev" only when the build knows none of them.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(version, bi)
}

// versionFrom is versionString over a given ldflags version and build
// info (nil when the binary has none).
func versionFrom(ldflags string, bi *debug.BuildInfo) string {
	v := ldflags
	var rev, at string
	modified := false
	if bi != nil {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var vcs []string
	if rev != "" {
		vcs = append(vcs, "revision "+rev)
	}
	if at != "" {
		vcs = append(vcs, at)
	}
	if modified && rev != "" {
		vcs = append(vcs, "with local changes")
	}
	switch {
	case v == "" && len(vcs) == 0:
		return "dev"
	case v == "":
		v = "dev"
	}
	if len(vcs) > 0 {
		v += " (" + strings.Join(vcs, ", ") + ")"
	}
	return v
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
		Version:       versionString(),
	}
	root.SetVersionTemplate("eepipe {{.Version}}\n")
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	// Defined here, not by cobra, so that it has no -v shorthand: -v is
	// each command's "more detail" (docs/configuration.md).
	root.Flags().Bool("version", false, "print the eepipe version (as eepipe version does)")
	pf := root.PersistentFlags()
	pf.StringVar(&f.ConfigPath, "config", "", "configuration `FILE` (YAML) with the service URL and accounts (default: "+envConfig+", else $XDG_CONFIG_HOME/eepipe/config.yaml or ~/.config/eepipe/config.yaml when it exists)")
	pf.StringVar(&f.CatalogPath, "catalog", "", "counter catalog file (one counter name a line, or a JSON array)")
	pf.BoolVar(&f.Debug, "debug", false, "debug logging on stderr: each request, which configuration file was read (secrets are redacted)")
	pf.StringVar(&f.MapPath, "map", "", "mapping `FILE` (YAML) of a client's own words for levels, races, genders, sectors and columns in the workbooks read (overrides map: in the configuration)")
	pf.StringVar(&f.LogFormat, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console or json")
	pf.StringVar(&f.MaxUncompressed, "max-uncompressed", "", "most an input XLSX workbook may unpack to (for example 2G; default 1G)")

	root.AddCommand(
		NewCmdVersion(f),
		NewCmdSandbox(f, nil),
		NewCmdValidate(f, nil),
		NewCmdTemplate(f, nil),
		NewCmdApply(f, nil),
		NewCmdDiff(f, nil),
		NewCmdRecalc(f, nil),
		NewCmdCompanies(f, nil),
		NewCmdScorecards(f, nil),
		NewCmdDemo(f, nil),
		NewCmdExport(f, nil),
		NewCmdReconcile(f, nil),
		NewCmdCheck(f, nil),
		NewCmdProfile(f, nil),
		NewCmdPropose(f, nil),
		NewCmdHistory(f, nil),
		NewCmdKeys(f),
		NewCmdSigner(f, nil),
	)
	registerCompletions(root)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("%s\n%s", flagErrorText(err), usageHint(cmd))}
	})
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		findConfig(f)
		return checkLogFormat(f.LogFormat)
	}
	return root
}

// NewCmdVersion returns `eepipe version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the eepipe version: the module version, and the VCS revision and time of the build",
		Long: `Print the eepipe version, as --version does: the module version (or the one
given at build time with -ldflags "-X main.version=..."), then the VCS
revision and commit time that go build recorded, and "with local changes"
when the working tree had uncommitted changes. "dev" only when the build
recorded none of them (go build -buildvcs=false from a source tree).`,
		Args: cobra.NoArgs,
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
	setMemoryLimit()
	paceGC()
	f := &Factory{IO: io, Now: time.Now, Getenv: os.Getenv}
	return Execute(ctx, f, args)
}

// Execute runs the root command with args and maps its error to an exit
// code. A panic is an internal error (ExitFatal), never invalid input.
func Execute(ctx context.Context, f *Factory, args []string) (code int) {
	defer func() {
		if v := recover(); v != nil {
			code = recoverInternal(v, f)
		}
	}()
	if f.rawErr == nil {
		// Off a terminal (or with --log-format json) every stderr line is
		// a JSON event: the lines printed for people are wrapped.
		// Timestamps from the wall clock, like the logger's. Beneath it,
		// stderr goes above a progress bar while one is drawn.
		f.routeStderr()
		jl := &jsonLines{w: f.IO.ErrOut, active: f.statusJSON, now: time.Now}
		f.rawErr = f.IO.ErrOut
		io := *f.IO
		io.ErrOut = jl
		f.IO = &io
		defer jl.Flush()
	}
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if f.logger != nil {
		_ = f.logger.Sync()
	}
	if jl, ok := f.IO.ErrOut.(*jsonLines); ok {
		// The final error is one event, however many lines it has.
		var b strings.Builder
		code := reportExit(&b, err)
		if cause := exitCause(err); cause != nil && f.statusJSON() {
			b.WriteString("eepipe: " + cause.Error() + "\n") // level error
		}
		_ = jl.WriteEvent(b.String())
		return code
	}
	return reportExit(f.IO.ErrOut, err)
}
