package main

import "github.com/spf13/cobra"

// demoOptions are the options of `eepipe demo`.
type demoOptions struct {
	Args []string
}

// NewCmdDemo returns `eepipe demo`. runF replaces the command's run function in tests.
// Placeholder until issue 4 lands.
func NewCmdDemo(f *Factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{}
	return &cobra.Command{
		Use:   "demo",
		Short: "(not built yet: issue 4)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "demo is not built yet")
		},
	}
}
