package main

import (
	"io"
	"os"
	"time"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// The factory and the streams every command is built from: the IO streams,
// the Factory (clock, environment, global flags, the logger) and the
// logger's construction. The command tree is in root.go.

// IOStreams are the command's standard streams: data to Out, status to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	OutTTY bool // Out is a terminal
	ErrTTY bool // ErrOut is a terminal: progress bars and console logs
	// ErrNotTTY says ErrOut is known not to be a terminal (SystemIO found
	// a pipe or a file): with --log-format auto every stderr line is then
	// a JSON event. Streams made up in tests leave it false.
	ErrNotTTY bool
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams { return FileIO(os.Stdin, os.Stdout, os.Stderr) }

// FileIO returns streams over files, finding which are terminals.
func FileIO(in, out, errOut *os.File) *IOStreams {
	errTTY := term.IsTerminal(int(errOut.Fd()))
	return &IOStreams{
		In: in, Out: out, ErrOut: errOut,
		OutTTY: term.IsTerminal(int(out.Fd())),
		ErrTTY: errTTY, ErrNotTTY: !errTTY,
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
	// Debug is --debug: debug logging. Verbose is a command's -v: more
	// detail in its output (addVerboseFlag).
	Debug bool
	// MapPath is the --map mapping file ("": map: in the configuration,
	// else none).
	MapPath   string
	Verbose   bool
	LogFormat string
	// MaxUncompressed is the --max-uncompressed limit as given ("": the
	// default, formats.DefaultMaxUncompressed).
	MaxUncompressed string

	// configFrom says how ConfigPath was found (findConfig).
	configFrom string

	logger *zap.Logger
	rawErr io.Writer // stderr under the JSON line wrapper (Execute)
	// bars is stderr beneath everything written to it (the JSON line
	// wrapper, the logger): while a progress bar is drawn it sends what is
	// written above the bar (routeStderr, progress.go).
	bars *barWriter
	// readFilesFunc replaces formats.ReadFiles in tests.
	readFilesFunc func([]string, formats.ReadOptions) (*pipeline.Batch, error)
}

// Logger returns the run's logger: console format on a terminal, JSON
// otherwise, on ErrOut.
func (f *Factory) Logger() *zap.Logger {
	if f.logger == nil {
		f.routeStderr()
		f.logger = newLogger(f.errRaw(), f.IO.ErrTTY, f.colour(), f.Debug, f.LogFormat)
	}
	return f.logger
}

// colour reports whether stderr may be coloured: a terminal, NO_COLOR
// unset or empty (no-color.org) and TERM not dumb (docs/configuration.md).
func (f *Factory) colour() bool {
	return f.IO.ErrTTY && f.getenv("NO_COLOR") == "" && f.getenv("TERM") != "dumb"
}

// getenv is f.Getenv, or "" without one.
func (f *Factory) getenv(k string) string {
	if f.Getenv == nil {
		return ""
	}
	return f.Getenv(k)
}

// consoleLogs reports whether the logs are for people (console format):
// --log-format console, or auto on a terminal. newLogger decides alike.
func (f *Factory) consoleLogs() bool {
	return consoleFormat(f.LogFormat, f.IO.ErrTTY)
}

func consoleFormat(format string, tty bool) bool {
	return format == "console" || (format != "json" && tty)
}

// newLogger returns the logger on w: console format (coloured levels with
// colour) when format says so or, with auto, on a terminal (tty), else JSON.
func newLogger(w io.Writer, tty, colour, debug bool, format string) *zap.Logger {
	level := zapcore.InfoLevel
	if debug {
		level = zapcore.DebugLevel
	}
	var enc zapcore.Encoder
	if consoleFormat(format, tty) {
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05")
		if colour {
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
