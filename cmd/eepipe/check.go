package main

import "github.com/spf13/cobra"

// checkOptions are the options of `eepipe check`.
type checkOptions struct {
	Args []string
}

// NewCmdCheck returns `eepipe check`. runF replaces the command's run function in tests.
// Placeholder until issue 6 lands.
func NewCmdCheck(f *Factory, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{}
	return &cobra.Command{
		Use:   "check",
		Short: "(not built yet: issue 6)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "check is not built yet")
		},
	}
}
