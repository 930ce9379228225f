package main

import (
	"slices"

	"github.com/eepipe/eepipe/pipeline"
)

// namedAccounts returns the accounts the plans name (their account
// column or grid label), when every plan names one: such a plan is
// written with that account's key pair or not at all, so a run over them
// need lock only those accounts, and an apply to another account of the
// same configuration goes on at the same time. Names are compared as
// routing compares them (pipeline.SameAccount: "UMOYA" is umoya). nil when
// a plan names none (the company lookup or its plan_id decides, after the
// lock): then every configured account is locked.
func namedAccounts(plans []*pipeline.InputPlan) []string {
	var names []string
	for _, p := range plans {
		if p.Account == "" {
			return nil
		}
		if !slices.ContainsFunc(names, func(n string) bool { return pipeline.SameAccount(n, p.Account) }) {
			names = append(names, p.Account)
		}
	}
	return names
}

// accountLockKeys returns the lock keys (pipeline.AccountLockKey) and
// names of the configured accounts named in only (none: all of them),
// names compared by pipeline.SameAccount, as plans are routed.
func accountLockKeys(cfg *Config, only []string) (keys, names []string) {
	for _, a := range cfg.Accounts {
		if len(only) == 0 || slices.ContainsFunc(only, func(n string) bool { return pipeline.SameAccount(n, a.Name) }) {
			keys = append(keys, pipeline.AccountLockKey(cfg.BaseURL, a.APIKey))
			names = append(names, a.Name)
		}
	}
	return keys, names
}
