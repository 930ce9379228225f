package main

import "github.com/spf13/cobra"

// exportOptions are the options of `eepipe export`.
type exportOptions struct {
	Args []string
}

// NewCmdExport returns `eepipe export`. runF replaces the command's run function in tests.
// Placeholder until issue 5 lands.
func NewCmdExport(f *Factory, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{}
	return &cobra.Command{
		Use:   "export",
		Short: "(not built yet: issue 5)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "export is not built yet")
		},
	}
}
