package main

import "github.com/spf13/cobra"

// applyOptions are the options of `eepipe apply`.
type applyOptions struct {
	Args []string
}

// NewCmdApply returns `eepipe apply`. runF replaces the command's run function in tests.
// Placeholder until issue 4 lands.
func NewCmdApply(f *Factory, runF func(*applyOptions) error) *cobra.Command {
	opts := &applyOptions{}
	return &cobra.Command{
		Use:   "apply",
		Short: "(not built yet: issue 4)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "apply is not built yet")
		},
	}
}
