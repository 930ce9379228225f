package main

import "github.com/spf13/cobra"

// validateOptions are the options of `eepipe validate`.
type validateOptions struct {
	Args []string
}

// NewCmdValidate returns `eepipe validate`. runF replaces the command's run function in tests.
// Placeholder until issue 3 lands.
func NewCmdValidate(f *Factory, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{}
	return &cobra.Command{
		Use:   "validate",
		Short: "(not built yet: issue 3)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "validate is not built yet")
		},
	}
}
