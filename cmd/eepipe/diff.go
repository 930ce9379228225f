package main

import (
	"github.com/spf13/cobra"
)

// diffOptions are the options of `eepipe diff`: those of apply, always
// as a dry run.
type diffOptions struct {
	applyOptions
}

// NewCmdDiff returns `eepipe diff`. runF replaces the command's run function in tests.
func NewCmdDiff(f *Factory, runF func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff FILE|FOLDER...",
		Short: "Print what apply would change (a summary per plan; -v: every counter old -> new); send no write",
		Long: `Read and validate the inputs, read the service's plans, and print the change
set that apply would execute: per plan create, update, recreate, unchanged
or failed (with the reason), the metadata fields that differ, and how many
counters in how many targets change; with -v each target and each counter
as old -> new ("(prefill)" when a new plan takes its values from a
scorecard). Nothing is written; only reads are sent. It is
the same computation as apply --dry-run and reconcile. With the state
store, changed counters are classified against the value eepipe last
applied, and those apply would leave alone are listed. -o FILE writes the
change set (.json, or a .xlsx sign-off workbook) for eepipe apply FILE,
and --sign-with KEY-FILE signs it off as the key's signer (eepipe signer
new; docs/apply-and-state.md, "Who can sign"); diff FILE of such a change
set checks it as apply would (signature, sign-off, applied before, drift)
and lists what it would write.

Exit status: 0 nothing would change, 1 something would change or a plan
cannot be applied, 2 invalid input or configuration, 3 fatal.`,
		Example: `  eepipe diff plans.xlsx
  eepipe --config eepipe.yaml diff clients/ --show-unchanged --report diff.json`,
		Args: needsInputs("workbook or folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.DryRun = true
			if runF != nil {
				return runF(opts)
			}
			_, err := runApply(cmd.Context(), f, &opts.applyOptions)
			return err
		},
	}
	addApplyFlags(cmd, &opts.applyOptions, false)
	addVerboseFlag(cmd, f, "every counter that changes, old -> new")
	addJSONFlag(cmd, &opts.JSON)
	onceStringVar(cmd.Flags(), &opts.State.Output, "output", "o", "write the change set to `FILE` (.json, or .xlsx: a sign-off workbook) for eepipe apply FILE")
	onceStringVar(cmd.Flags(), &opts.State.SignWith, "sign-with", "", "sign off the change set of -o with the signer's key `FILE` (eepipe signer new): its name, the time and the set's content")
	return cmd
}
