package main

import "github.com/spf13/cobra"

// templateOptions are the options of `eepipe template`.
type templateOptions struct {
	Args []string
}

// NewCmdTemplate returns `eepipe template`. runF replaces the command's run function in tests.
// Placeholder until issue 3 lands.
func NewCmdTemplate(f *Factory, runF func(*templateOptions) error) *cobra.Command {
	opts := &templateOptions{}
	return &cobra.Command{
		Use:   "template",
		Short: "(not built yet: issue 3)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "template is not built yet")
		},
	}
}
