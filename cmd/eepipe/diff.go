package main

import "github.com/spf13/cobra"

// diffOptions are the options of `eepipe diff`.
type diffOptions struct {
	Args []string
}

// NewCmdDiff returns `eepipe diff`. runF replaces the command's run function in tests.
// Placeholder until issue 4 lands.
func NewCmdDiff(f *Factory, runF func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{}
	return &cobra.Command{
		Use:   "diff",
		Short: "(not built yet: issue 4)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "diff is not built yet")
		},
	}
}
