package assemble

import (
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// CheckRouting reports, before any request, the plans that cannot be routed
// to an account. With several accounts a plan goes to the account its
// account column names, else to its company's account (company columns),
// else to the account that holds its plan_id; a plan with none of these is
// an error. An account column naming no configured account is an error
// naming the configured accounts (checked when the accounts have names).
func CheckRouting(plans []*pipeline.InputPlan, accounts []pipeline.Account) pipeline.Problems {
	var ps pipeline.Problems
	named := len(accounts) > 0
	var names []string
	for _, a := range accounts {
		if a.Name == "" {
			named = false
		}
		names = append(names, a.Name)
	}
	if named {
		for _, p := range plans {
			if p.Account != "" && pipeline.AccountIndex(accounts, p.Account) < 0 {
				at := p.Origin
				if p.AccountOrigin.File != "" {
					at = p.AccountOrigin // the account cell itself
				}
				ps.Errorf(at, p.Account, "%s names account %q, which is not configured; the configured account%s %s",
					p.Key(), p.Account, pipeline.PluralNoun(len(names), " is", "s are"), strings.Join(names, ", "))
			}
		}
	}
	if len(accounts) <= 1 {
		return ps
	}
	configured := fmt.Sprintf("with %d accounts configured", len(accounts))
	if named {
		configured = fmt.Sprintf("with several accounts configured (%s)", strings.Join(names, ", "))
	}
	for _, p := range plans {
		if p.Company.IsZero() && p.PlanID == 0 && p.Account == "" {
			where, what := MissingCompany(p)
			ps.Errorf(where, "", "%s has no company identifier, no account and no plan_id; %s the company, the account column or the plan_id decides which account the plan belongs to: %s",
				p.Key(), configured, what)
		}
	}
	return ps
}
