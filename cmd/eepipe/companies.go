package main

import "github.com/spf13/cobra"

// companiesOptions are the options of `eepipe companies`.
type companiesOptions struct {
	Args []string
}

// NewCmdCompanies returns `eepipe companies`. runF replaces the command's run function in tests.
// Placeholder until issue 4 lands.
func NewCmdCompanies(f *Factory, runF func(*companiesOptions) error) *cobra.Command {
	opts := &companiesOptions{}
	return &cobra.Command{
		Use:   "companies",
		Short: "(not built yet: issue 4)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "companies is not built yet")
		},
	}
}
