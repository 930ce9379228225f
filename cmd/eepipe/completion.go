package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagValues are the values of the enumerated flags, by command ("" for
// every command), for shell completion.
var flagValues = map[string]map[string][]string{
	"":         {"log-format": logFormats},
	"template": {"layout": {"grid", "flat"}},
	"export":   {"layout": {"grid", "flat", "long"}},
}

// flagFileExts are the file kinds a flag takes, by command ("" for every
// command), for shell completion.
var flagFileExts = map[string]map[string][]string{
	"":          {"config": {"yaml", "yml"}, "catalog": {"txt", "json"}, "map": {"yaml", "yml"}},
	"apply":     {"report": {"json", "csv", "xlsx"}, "rejects": {"xlsx", "csv"}},
	"diff":      {"report": {"json", "csv", "xlsx"}, "output": {"json", "xlsx"}},
	"validate":  {"report": {"csv", "xlsx", "json"}, "annotate": {"xlsx"}},
	"reconcile": {"report": {"xlsx", "json", "csv"}},
	"check":     {"report": {"xlsx", "csv", "json"}, "targets": {"csv"}},
	"template":  {"output": {"xlsx"}},
	"export":    {"output": {"xlsx", "csv"}},
	"sandbox":   {"fixtures": {"json"}},
	"history":   {"report": {"json", "csv", "xlsx"}},
}

// flagDirs are the flags that take a folder.
var flagDirs = map[string]bool{"out": true, "output-dir": true}

// flagNoFiles are the flags whose values are not files (ids, numbers,
// names): completion offers no file names for them.
var flagNoFiles = map[string]bool{"plan": true, "company": true, "account": true, "vat": true, "registration": true,
	"id-number": true, "base-url": true, "lookup-url": true, "listen": true, "faults": true, "start": true,
	"since": true, "counter": true}

// inputCommands take workbooks (XLSX, CSV) and folders as arguments.
var inputCommands = map[string]bool{"apply": true, "diff": true, "validate": true, "reconcile": true, "check": true}

// registerCompletions gives every command's enumerated flags their values
// and file flags their file kinds, for `eepipe completion bash|zsh|fish|
// powershell`; and hides the "(default [])" of list flags from help.
func registerCompletions(root *cobra.Command) {
	values := func(v []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return v, cobra.ShellCompDirectiveNoFileComp
		}
	}
	exts := func(e []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return e, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	dirs := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	none := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	register := func(cmd *cobra.Command, fs *pflag.FlagSet, name string) {
		fl := fs.Lookup(name)
		if fl == nil {
			return
		}
		switch fl.Value.Type() {
		case "stringArray", "stringSlice", "intSlice":
			// pflag hides their "[]" default itself; "" would show "(default )".
		default:
			if fl.DefValue == "[]" {
				fl.DefValue = "" // help shows no "(default [])"
			}
		}
		var fn func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)
		key := cmd.Name()
		if cmd == root {
			key = ""
		}
		switch {
		case flagValues[key][name] != nil:
			fn = values(flagValues[key][name])
		case flagFileExts[key][name] != nil:
			fn = exts(flagFileExts[key][name])
		case flagDirs[name]:
			fn = dirs
		case flagNoFiles[name]:
			fn = none
		default:
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(name, fn)
	}
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) { register(root, root.PersistentFlags(), fl.Name) })
	for _, cmd := range root.Commands() {
		fs := cmd.Flags()
		fs.VisitAll(func(fl *pflag.Flag) { register(cmd, fs, fl.Name) })
		if inputCommands[cmd.Name()] && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = exts([]string{"xlsx", "csv"})
		}
		if cmd.Name() == "recalc" && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = none
		}
	}
}
