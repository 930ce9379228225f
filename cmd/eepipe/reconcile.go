package main

import "github.com/spf13/cobra"

// reconcileOptions are the options of `eepipe reconcile`.
type reconcileOptions struct {
	Args []string
}

// NewCmdReconcile returns `eepipe reconcile`. runF replaces the command's run function in tests.
// Placeholder until issue 5 lands.
func NewCmdReconcile(f *Factory, runF func(*reconcileOptions) error) *cobra.Command {
	opts := &reconcileOptions{}
	return &cobra.Command{
		Use:   "reconcile",
		Short: "(not built yet: issue 5)",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			return exitf(ExitFatal, "reconcile is not built yet")
		},
	}
}
