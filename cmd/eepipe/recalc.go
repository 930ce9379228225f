package main

import "github.com/spf13/cobra"

// recalcOptions are the options of `eepipe recalc`.
type recalcOptions struct {
	Args []string
}

// NewCmdRecalc returns `eepipe recalc`. runF replaces the command's run function in tests.
// Placeholder until issue 4 lands.
func NewCmdRecalc(f *Factory, runF func(*recalcOptions) error) *cobra.Command {
	opts := &recalcOptions{}
	return &cobra.Command{
		Use:   "recalc",
		Short: "(not built yet: issue 4)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "recalc is not built yet")
		},
	}
}
