package main

import "github.com/spf13/cobra"

// sandboxOptions are the options of `eepipe sandbox`.
type sandboxOptions struct {
	Args []string
}

// NewCmdSandbox returns `eepipe sandbox`. runF replaces the command's run function in tests.
// Placeholder until issue 2 lands.
func NewCmdSandbox(f *Factory, runF func(*sandboxOptions) error) *cobra.Command {
	opts := &sandboxOptions{}
	return &cobra.Command{
		Use:   "sandbox",
		Short: "(not built yet: issue 2)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "sandbox is not built yet")
		},
	}
}
