package main

import (
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/run"
)

// accountLocks is the configuration as run.AccountLocks, which
// decides which accounts a run locks and under which key (the service as
// its history knows it: same_service_as, else base_url).
func accountLocks(cfg *Config) run.AccountLocks {
	l := run.AccountLocks{BaseURL: cfg.address().History(), Accounts: make([]pipeline.LockAccount, len(cfg.Accounts))}
	for i, a := range cfg.Accounts {
		l.Accounts[i] = pipeline.LockAccount{Name: a.Name, APIKey: a.APIKey}
	}
	return l
}
