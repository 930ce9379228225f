package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/keyrotate"
	"github.com/eepipe/eepipe/pipeline/planapi"
)

// NewCmdKeys returns `eepipe keys` with its status and rotate commands.
func NewCmdKeys(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Show when the accounts' API keys expire, and rotate a key",
		Long: `The service's API keys may expire (30 to 365 days after they are created).
keys status reads each configured account's expiry from the service's
answer; keys rotate replaces an account's key with a new one
(docs/configuration.md, "API keys").`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(NewCmdKeysStatus(f, nil), NewCmdKeysRotate(f, nil))
	return cmd
}

// keysStatusOptions are the options of `eepipe keys status`.
type keysStatusOptions struct {
	JSON       bool
	Conn       connFlags
	HTTPClient *http.Client // tests
}

// NewCmdKeysStatus returns `eepipe keys status`. runF replaces the
// command's run function in tests.
func NewCmdKeysStatus(f *Factory, runF func(*keysStatusOptions) error) *cobra.Command {
	opts := &keysStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each configured account's API key expiry, as the service states it",
		Long: `Make one small signed read per configured account (its scorecards) and
show the key's expiry as the answer's headers state it: X-Api-Key-Expires
(the date) and, with 30 days or fewer left, X-Api-Key-Expires-In. A key
whose answers carry no expiry never expires.

Exit status 0 when every key is accepted and none expires within 30 days,
1 when a key expires within 30 days or is refused (or its read failed),
2 invalid usage or configuration.`,
		Example: `  eepipe keys status --config eepipe.yaml
  eepipe keys status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runKeysStatus(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the accounts' key status as JSON")
	opts.Conn.register(cmd)
	return cmd
}

// keyStatus is one account's line of keys status.
type keyStatus struct {
	Account   string `json:"account"`
	APIKey    string `json:"api_key"` // masked
	Status    string `json:"status"`  // ok, expires soon, refused, failed
	Expires   string `json:"expires,omitempty"`
	ExpiresIn string `json:"expires_in,omitempty"`
	Error     string `json:"error,omitempty"`
}

func runKeysStatus(ctx context.Context, f *Factory, opts *keysStatusOptions) error {
	cfg, err := loadConfig(f, opts.Conn, configNeeds{Keys: true})
	if err != nil {
		return err
	}
	log := f.Logger()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	var rows []keyStatus
	bad := false
	for _, a := range cfg.Accounts {
		keys, err := accountKeys(cfg, a, a.APIKey, a.APISecret, log, opts.HTTPClient)
		if err != nil {
			return err
		}
		r := keyStatus{Account: a.Name, APIKey: keyrotate.Mask(a.APIKey), Status: "ok"}
		err = keys.Check(ctx)
		r.Expires, r.ExpiresIn = keys.Expiry()
		switch {
		case errors.Is(err, pipeline.ErrUnauthorized):
			r.Status, r.Error = "refused", err.Error()
		case err != nil:
			r.Status, r.Error = "failed", err.Error()
		case r.ExpiresIn != "":
			r.Status = "expires soon"
		}
		bad = bad || r.Status != "ok"
		rows = append(rows, r)
	}
	if err := printKeyStatus(f, opts.JSON, rows); err != nil {
		return err
	}
	if bad {
		return silentExit(ExitDiff)
	}
	return nil
}

// printKeyStatus prints the rows as a table, or as JSON.
func printKeyStatus(f *Factory, asJSON bool, rows []keyStatus) error {
	if asJSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"accounts": rows}); err != nil {
			return exitf(ExitFatal, "%v", err)
		}
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tAPI KEY\tSTATUS\tEXPIRES\tEXPIRES IN")
	for _, r := range rows {
		exp := r.Expires
		if exp == "" && r.Error == "" {
			exp = "never"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Account, r.APIKey, r.Status, dash(exp), dash(r.ExpiresIn))
	}
	if err := tw.Flush(); err != nil {
		return exitf(ExitFatal, "%v", err)
	}
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(f.IO.ErrOut, "account %s: %s\n", r.Account, r.Error)
		}
	}
	return nil
}

// accountKeys is the key endpoints of the service signed with one key
// pair of account a.
func accountKeys(cfg *Config, a AccountConfig, key, secret string, log *zap.Logger, hc *http.Client) (*planapi.Keys, error) {
	c, err := apiclient.New(apiclient.Options{BaseURL: cfg.BaseURL, APIKey: key, APISecret: secret,
		HTTPClient: hc, Logger: log.With(zap.String("account", a.Name))})
	if err != nil {
		return nil, exitf(ExitInvalid, "account %s: %v", a.Name, err)
	}
	return planapi.NewKeys(c), nil
}
