package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// logFormats are the values --log-format accepts.
var logFormats = []string{"auto", "console", "json"}

// checkLogFormat refuses a --log-format eepipe does not know.
func checkLogFormat(format string) error {
	for _, v := range logFormats {
		if format == v {
			return nil
		}
	}
	return exitf(ExitInvalid, "--log-format %q: use %s", format, strings.Join(logFormats, ", "))
}

// usageHint is the line added to usage errors: the command's usage line
// and where its help is ("eepipe diff --help"; the root's "eepipe --help").
func usageHint(cmd *cobra.Command) string {
	return fmt.Sprintf("usage: %s (%s --help explains it)", cmd.UseLine(), cmd.CommandPath())
}

// usageErrorf is a usage error of cmd (exit 2) with the usage hint.
func usageErrorf(cmd *cobra.Command, format string, args ...any) *ExitError {
	return exitf(ExitInvalid, "%s\n%s", fmt.Sprintf(format, args...), usageHint(cmd))
}

// needsInputs is the Args check of the commands that read workbooks:
// "apply needs at least one workbook or folder".
func needsInputs(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErrorf(cmd, "%s needs at least one %s", cmd.Name(), what)
		}
		return nil
	}
}

// noArgsWriteTo is the Args check of the commands that write a file given
// with -o: a lone argument that looks like a file name was probably meant
// as -o.
func noArgsWriteTo(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return nil
	case len(args) == 1 && !cmd.Flags().Changed("output") && strings.Contains(args[0], "."):
		return usageErrorf(cmd, "%s takes no file argument: did you mean -o %s?", cmd.Name(), args[0])
	}
	return usageErrorf(cmd, "%s takes no arguments (got %q); the file to write is given with -o", cmd.Name(), strings.Join(args, " "))
}

// refuseOverwrite refuses to replace an existing file unless --force says
// so: export and template treat a file a person may have edited alike.
// Scheduled runs (--output-dir) write new stamped names and are not asked.
func refuseOverwrite(path string, check bool) error {
	if !check || path == "" || path == "-" {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return exitf(ExitInvalid, "%s exists; give --force to replace it, or another -o name", path)
	}
	return nil
}

// checkReportName is the one check of a --report file name, shared by
// every command that writes a report (apply, check, history, reconcile,
// validate): the format comes from the extension, so a name without .xlsx,
// .csv or .json is a usage error (exit 2) found before any work, as is a
// folder that does not exist (see refuseMissingFolder; outputDir as there).
func checkReportName(report, outputDir string) error {
	switch strings.ToLower(filepath.Ext(report)) {
	case ".xlsx", ".csv", ".json":
	default:
		return exitf(ExitInvalid, "--report %s: use a .xlsx, .csv or .json file name", report)
	}
	return refuseMissingFolder("--report", report, outputDir)
}

// refuseMissingFolder is the usage error (exit 2) for an output file, given
// with flag (-o, --report, --annotate), whose folder does not exist: every
// command finds it before any work, not after the run as a fatal error
// naming the temporary file the write starts with. With --output-dir the
// outputs go there (created when missing), so outputDir set skips it.
func refuseMissingFolder(flag, path, outputDir string) error {
	if path == "" || path == "-" || outputDir != "" {
		return nil
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return exitf(ExitInvalid, "%s %s: the folder %s does not exist; create it first, or write somewhere else", flag, path, dir)
	case err != nil:
		return exitf(ExitInvalid, "%s %s: the folder %s cannot be used: %v", flag, path, dir, err)
	case !st.IsDir():
		return exitf(ExitInvalid, "%s %s: %s is not a folder", flag, path, dir)
	}
	return nil
}

// flagValueWords rewrites the value errors of the flag library in the
// user's words: "invalid argument "abc" for "--plan" flag: strconv.ParseInt:
// parsing "abc": invalid syntax" becomes "--plan "abc": not a whole number".
var flagValueWords = regexp.MustCompile(`^invalid argument (".*") for "(-[^"]+)" flag: (?:strconv\.Parse\w+: parsing ".*": (invalid syntax|value out of range)|time: (.*))$`)

// flagErrorText is err's message, in the user's words when flagValueWords
// knows it.
func flagErrorText(err error) string {
	m := flagValueWords.FindStringSubmatch(err.Error())
	switch {
	case m == nil:
		return err.Error()
	case m[3] == "invalid syntax":
		return fmt.Sprintf("%s %s: not a whole number", m[2], m[1])
	case m[3] == "value out of range":
		return fmt.Sprintf("%s %s: the number is too large", m[2], m[1])
	}
	return fmt.Sprintf("%s %s: %s (a duration is a number with a unit: 90s, 15m, 2h)", m[2], m[1], strings.TrimSpace(m[4]))
}

// addVerboseFlag registers -v/--verbose, "more detail in the output", on a
// command that has details to show; what they are is said in detail. Debug
// logging is the global --debug, never -v (docs/configuration.md).
func addVerboseFlag(cmd *cobra.Command, f *Factory, detail string) {
	cmd.Flags().BoolVarP(&f.Verbose, "verbose", "v", false, "more detail in the output: "+detail)
}

// addJSONFlag registers --json: the command's report document on stdout,
// the one --report FILE.json writes; stdout then holds it alone, and
// status and logs stay on stderr (docs/scheduling.md).
func addJSONFlag(cmd *cobra.Command, on *bool) {
	cmd.Flags().BoolVar(on, "json", false, "write the report on stdout as JSON, the document --report FILE.json writes; nothing else goes to stdout (logs stay on stderr)")
}

// textOut is where a command prints its text for people: stdout, or
// nowhere with --json (stdout then holds the JSON document alone).
func textOut(f *Factory, json bool) io.Writer {
	if json {
		return io.Discard
	}
	return f.IO.Out
}

// writeJSONOut writes, with --json (on), the command's report document
// to stdout through encode.
func writeJSONOut(f *Factory, on bool, encode func(io.Writer) error) error {
	if !on {
		return nil
	}
	if err := encode(f.IO.Out); err != nil {
		return exitf(ExitFatal, "writing the JSON report to stdout: %v", err)
	}
	return nil
}
