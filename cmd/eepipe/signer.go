package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// signerNewOptions are the options of `eepipe signer new`.
type signerNewOptions struct {
	Name   string // --name: the signer's name, as the configuration lists it
	Output string // -o: the private key file to write
}

// NewCmdSigner returns `eepipe signer` and its subcommand new. runF
// replaces new's run function in tests.
func NewCmdSigner(f *Factory, runF func(*signerNewOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signer",
		Short: "Make a person's key for signing off change sets",
		Long: `A signer's key signs off a change set (eepipe diff FILES -o SET --sign-with
KEY-FILE): the sign-off names the person, and apply refuses a set that no
signer listed in the configuration (signers:) signed off, or that was
edited after they did. See docs/apply-and-state.md, "Who can sign".`,
		Args: cobra.NoArgs,
	}
	opts := &signerNewOptions{}
	newCmd := &cobra.Command{
		Use:   "new --name NAME -o FILE",
		Short: "Write a new private signing key to FILE and print its public key",
		Long: `Write a new ed25519 signing key for NAME to FILE (readable by its owner
alone; an existing file is never replaced) and print its public key on
standard output, one line, as the configuration's public_key takes it:

  signers:
    - name: NAME
      public_key: ed25519:...

Keep FILE private: whoever holds it can sign off change sets as NAME.

Exit status: 0 written, 2 invalid name, FILE exists or its folder does not, 3 fatal.`,
		Example: `  eepipe signer new --name "Thandi Nkosi" -o ~/.config/eepipe/thandi.key`,
		Args:    noArgsWriteTo,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			if opts.Name == "" || opts.Output == "" {
				return usageErrorf(cmd, "signer new needs the signer's name and the key file to write: --name NAME -o FILE")
			}
			return runSignerNew(f, opts)
		},
	}
	fl := newCmd.Flags()
	fl.StringVar(&opts.Name, "name", "", "the signer's `NAME`, as the configuration's signers: list it")
	onceStringVar(fl, &opts.Output, "output", "o", "the private key `FILE` to write (0600; never replaced)")
	cmd.AddCommand(newCmd)
	return cmd
}

// runSignerNew writes the key file and prints the public key.
func runSignerNew(f *Factory, opts *signerNewOptions) error {
	if err := refuseMissingFolder("-o", opts.Output, ""); err != nil {
		return err
	}
	k, err := savedset.NewSignerKey(opts.Name, rand.Reader)
	if err != nil {
		return exitf(ExitInvalid, "--name: %v", err)
	}
	err = xlsx.WriteNewFileAtomic(opts.Output, func(w io.Writer) error {
		_, err := w.Write(savedset.MarshalSignerKey(k))
		return err
	})
	switch {
	case errors.Is(err, xlsx.ErrExists):
		return exitf(ExitInvalid, "%s exists; a signing key is never replaced: give another -o name", opts.Output)
	case err != nil:
		return exitf(ExitFatal, "%v", err)
	}
	fmt.Fprintln(f.IO.Out, k.PublicKey())
	fmt.Fprintf(f.IO.ErrOut, "Signing key of %s written to %s (keep it private). List its public key, printed above, under signers: in the configuration.\n", k.Name, opts.Output)
	return nil
}

// readSignerKey reads the key file of --sign-with. A file that group or
// others may read or write is refused, as ssh refuses such a key: whoever
// can read it can sign off as its signer.
func readSignerKey(path string) (*savedset.SignerKey, error) {
	b, err := readSmallRegularFile(path)
	if err != nil {
		return nil, exitf(ExitInvalid, "--sign-with %s: %v", path, err)
	}
	if st, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && st.Mode().Perm()&0o066 != 0 {
		return nil, exitf(ExitInvalid, "--sign-with %s: the signing key file is %s (mode %04o), so others could sign off as its signer; run chmod 600 %s",
			path, describeAccess(st.Mode().Perm()&0o066), st.Mode().Perm(), path)
	}
	k, err := savedset.ParseSignerKey(b)
	if err != nil {
		return nil, exitf(ExitInvalid, "--sign-with %s: %v", path, err)
	}
	return k, nil
}
