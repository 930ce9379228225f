package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// UncheckedCompanies returns one warning for each company whose plans the
// change set writes with the key pair of an account whose company is not
// known (a single account without company_id, as one from the environment
// is): eepipe cannot check that the key pair is that company's. Plans whose
// company was not looked up are named by their identifiers; plans without
// company columns get one warning of their own.
func UncheckedCompanies(cs *ChangeSet, accounts []pipeline.Account) []string {
	if len(accounts) != 1 || accounts[0].CompanyID != "" || cs == nil {
		return nil
	}
	name := accounts[0].Name
	counts := map[string]int{}
	var order []string
	for _, d := range cs.Plans {
		if d == nil || !d.Action.Changes() || !pipeline.SameAccount(d.Account, name) {
			continue
		}
		who := ""
		switch {
		case d.Company != nil:
			who = pipeline.DescribeCompany(*d.Company)
		case d.Input != nil && !d.Input.Company.IsZero():
			who = "the company with " + d.Input.Company.String()
		}
		if counts[who] == 0 {
			order = append(order, who)
		}
		counts[who]++
	}
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case a == "" && b != "":
			return 1
		case b == "" && a != "":
			return -1
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, who := range order {
		plans, are := "1 plan", "is"
		if counts[who] != 1 {
			plans, are = fmt.Sprintf("%d plans", counts[who]), "are"
		}
		if who == "" {
			out = append(out, fmt.Sprintf("%s without company columns %s written with the key pair of account %s, whose company is not known: "+
				"eepipe cannot check that the plans belong to it (give the account its company_id in a --config file, and the plans their company columns)",
				plans, are, name))
			continue
		}
		out = append(out, fmt.Sprintf("%s of %s %s written with the key pair of account %s, whose company is not known: "+
			"eepipe cannot check that the key pair is that company's (give the account its company_id in a --config file)", plans, who, are, name))
	}
	return out
}
