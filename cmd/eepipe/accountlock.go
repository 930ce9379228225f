package main

import "github.com/eepipe/eepipe/pipeline"

// accountLocks is the configuration as pipeline.AccountLocks, which
// decides which accounts a run locks and under which key.
func accountLocks(cfg *Config) pipeline.AccountLocks {
	l := pipeline.AccountLocks{BaseURL: cfg.BaseURL, Accounts: make([]pipeline.LockAccount, len(cfg.Accounts))}
	for i, a := range cfg.Accounts {
		l.Accounts[i] = pipeline.LockAccount{Name: a.Name, APIKey: a.APIKey}
	}
	return l
}
