package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/sourcegraph/conc/pool"
)

// ErrCompanyNotFound is the failure of a plan whose company identifiers
// match no company record.
var ErrCompanyNotFound = errors.New("company not found")

// AmbiguousCompanyError is the failure of a plan whose company identifiers
// match several companies (the lookup returns a record when any one
// identifier matches), or one company whose record contradicts another
// identifier given.
type AmbiguousCompanyError struct {
	IDs        CompanyIDs
	Candidates []Company
	Detail     string // for a contradiction: which identifier disagrees
}

func (e *AmbiguousCompanyError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("ambiguous company: %s: %s", e.IDs, e.Detail)
	}
	names := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		names[i] = describeCompany(c)
	}
	return fmt.Sprintf("ambiguous company: %s match %d different companies: %s; give the identifiers of one company only",
		e.IDs, len(e.Candidates), strings.Join(names, "; "))
}

// describeCompany formats a company record for messages.
func describeCompany(c Company) string {
	parts := []string{"id " + c.ID}
	if c.VATNumber != "" {
		parts = append(parts, "VAT "+c.VATNumber)
	}
	if c.RegistrationNumber != "" {
		parts = append(parts, "registration "+c.RegistrationNumber)
	}
	if c.IdentificationNumber != "" {
		parts = append(parts, "ID "+c.IdentificationNumber)
	}
	return fmt.Sprintf("%s (%s)", c.TradingName, strings.Join(parts, ", "))
}

// ResolveCompany picks the one company that records (the lookup's answer
// for ids, with OR semantics) describe. Several distinct company ids are an
// *AmbiguousCompanyError listing the candidates; no record is
// ErrCompanyNotFound; a single company whose record holds a different value
// for an identifier the file gives is an *AmbiguousCompanyError too (the
// identifiers point at different companies, one of which is not known).
func ResolveCompany(ids CompanyIDs, records []Company) (*Company, error) {
	var distinct []Company
	for _, c := range records {
		if !slices.ContainsFunc(distinct, func(d Company) bool { return d.ID == c.ID }) {
			distinct = append(distinct, c)
		}
	}
	switch len(distinct) {
	case 0:
		return nil, fmt.Errorf("%w: no company has %s", ErrCompanyNotFound, ids)
	case 1:
	default:
		return nil, &AmbiguousCompanyError{IDs: ids, Candidates: distinct}
	}
	c := distinct[0]
	for _, f := range []struct{ label, given, held string }{
		{"VAT number", ids.VAT, c.VATNumber},
		{"registration number", ids.Registration, c.RegistrationNumber},
		{"ID number", ids.IDNumber, c.IdentificationNumber},
	} {
		if f.given != "" && !sameIdentifier(f.given, f.held) {
			held := f.held
			if held == "" {
				held = "none"
			}
			return nil, &AmbiguousCompanyError{IDs: ids, Candidates: distinct, Detail: fmt.Sprintf(
				"the other identifiers belong to %s, whose %s is %s, not %s; correct the company columns",
				describeCompany(c), f.label, held, f.given)}
		}
	}
	return &c, nil
}

// sameIdentifier compares identifiers by their letters and digits only, so
// that "2009/012345/07" and "2009-012345-07" or " 4012345678" agree;
// leading zeros count.
func sameIdentifier(a, b string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToUpper(r)
			}
			return -1
		}, s)
	}
	return norm(a) == norm(b)
}

// CheckRouting reports, before any request, the plans that cannot be routed
// to an account: with several accounts every plan needs company columns
// (the company decides the account). lookup tells whether a company lookup
// is configured; several accounts without one is an error of the
// configuration, reported by the caller.
func CheckRouting(plans []*InputPlan, accounts []Account) Problems {
	var ps Problems
	if len(accounts) <= 1 {
		return ps
	}
	var names []string
	for _, a := range accounts {
		if a.Name != "" {
			names = append(names, a.Name)
		}
	}
	configured := fmt.Sprintf("with %d accounts configured", len(accounts))
	if len(names) == len(accounts) {
		configured = fmt.Sprintf("with several accounts configured (%s)", strings.Join(names, ", "))
	}
	for _, p := range plans {
		if p.Company.IsZero() {
			where, what := MissingCompany(p)
			ps.Errorf(where, "", "%s has no company identifier: %s; %s the company decides which account the plan belongs to",
				p.Key(), what, configured)
		}
	}
	return ps
}

// route is where one input plan goes: an account index, or a failure.
type route struct {
	account int // index into Runner.accounts; -1 when failed
	company *Company
	fail    string
}

// routePlans resolves the companies (one lookup per distinct identifier
// set) and picks each plan's account. It returns an error only when the
// run must stop (a fatal lookup error or cancellation).
func (r *Runner) routePlans(ctx context.Context, plans []*InputPlan) ([]route, error) {
	need := r.finder != nil
	var sets []CompanyIDs
	seen := map[CompanyIDs]bool{}
	for _, p := range plans {
		if need && !p.Company.IsZero() && !seen[p.Company] {
			seen[p.Company] = true
			sets = append(sets, p.Company)
		}
	}
	type lookup struct {
		company *Company
		err     error
	}
	results := make(map[CompanyIDs]lookup, len(sets))
	var mu sync.Mutex
	wp := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for _, ids := range sets {
		wp.Go(func() {
			recs, err := r.finder.FindCompanies(ctx, ids)
			var l lookup
			if err != nil {
				l.err = fmt.Errorf("company lookup for %s failed: %w", ids, err)
			} else {
				l.company, l.err = ResolveCompany(ids, recs)
			}
			mu.Lock()
			results[ids] = l
			mu.Unlock()
		})
	}
	wp.Wait()
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, err
	}

	out := make([]route, len(plans))
	for i, p := range plans {
		rt := route{account: -1}
		var l lookup
		looked := false
		if need && !p.Company.IsZero() {
			l, looked = results[p.Company], true
			rt.company = l.company
		}
		switch {
		case len(r.accounts) == 0:
			rt.fail = "no account is configured"
		case len(r.accounts) == 1:
			a := r.accounts[0]
			switch {
			case looked && l.err != nil:
				rt.fail = l.err.Error()
			case looked && a.CompanyID != "" && l.company.ID != a.CompanyID:
				rt.fail = fmt.Sprintf("the company columns name %s, but the configured account %s belongs to company %s; "+
					"a plan is only written with its own company's account", describeCompany(*l.company), a.Name, a.CompanyID)
			default:
				rt.account = 0
			}
		default:
			switch {
			case p.Company.IsZero():
				rt.fail = "the plan has no company identifier, and with several accounts the company decides the account"
			case !looked:
				rt.fail = "with several accounts the company lookup must be configured to find the plan's account"
			case l.err != nil:
				rt.fail = l.err.Error()
			default:
				idx := slices.IndexFunc(r.accounts, func(a Account) bool { return a.CompanyID == l.company.ID })
				if idx < 0 {
					rt.fail = fmt.Sprintf("no configured account belongs to %s; add an account with company_id %s to the configuration",
						describeCompany(*l.company), l.company.ID)
				} else {
					rt.account = idx
				}
			}
		}
		out[i] = rt
	}
	guardUnknownCompany(r.accounts, out)
	return out, nil
}

// guardUnknownCompany fails the plans routed to a single account whose
// company is not configured (an account from the environment) when their
// company columns name several companies: the key pair belongs to one
// company at most, and a plan is only ever written with its own company's
// account, so none of them is written. Plans without company columns are
// left alone.
func guardUnknownCompany(accounts []Account, routes []route) {
	if len(accounts) != 1 || accounts[0].CompanyID != "" {
		return
	}
	var names []string
	seen := map[string]bool{}
	for _, rt := range routes {
		if rt.account == 0 && rt.company != nil && !seen[rt.company.ID] {
			seen[rt.company.ID] = true
			names = append(names, fmt.Sprintf("%s (%s)", rt.company.TradingName, rt.company.ID))
		}
	}
	if len(names) < 2 {
		return
	}
	for i, rt := range routes {
		if rt.account == 0 && rt.company != nil {
			routes[i].account = -1
			routes[i].fail = fmt.Sprintf("the company columns name %d different companies (%s), but only one account (%s) is configured "+
				"and its company is not known, so eepipe cannot tell which plans belong to it; a plan is only ever written with its own "+
				"company's key pair. Apply each company's plans with that company's key pair, or use a --config file that gives each "+
				"account its company_id", len(names), strings.Join(names, ", "), accounts[0].Name)
		}
	}
}

// matchPlan finds the stored plan an input plan refers to in an account's
// plan list: by plan id, else by name and start date. It returns nil and
// no error when the plan is not there (to be created), and an error for an
// unknown plan id or an ambiguous name.
func matchPlan(in *InputPlan, list []Plan, account string) (*Plan, error) {
	if in.PlanID != 0 {
		for i := range list {
			if list[i].ID == in.PlanID {
				return &list[i], nil
			}
		}
		return nil, fmt.Errorf("plan %d is not on account %s (it may have been deleted, or belong to another account); "+
			"remove the plan_id to create the plan again", in.PlanID, account)
	}
	matches := plansByKey(list, in.Name, in.StartDate, nil)
	if len(matches) == 0 {
		// Tolerate a change of letter case only when it is unambiguous.
		for i := range list {
			if strings.EqualFold(strings.TrimSpace(list[i].Name), strings.TrimSpace(in.Name)) && list[i].StartDate == in.StartDate {
				matches = append(matches, &list[i])
			}
		}
		if len(matches) > 1 {
			matches = nil
		}
	}
	switch len(matches) {
	case 0:
		return nil, nil
	case 1:
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = fmt.Sprint(m.ID)
	}
	return nil, fmt.Errorf("ambiguous plan: plans %s on account %s are all named %q and start %s; "+
		"put the plan_id of the one to update in the file", strings.Join(ids, ", "), account, in.Name, in.StartDate)
}

// plansByKey returns the plans named name (exactly, after trimming spaces)
// that start on start, leaving out the ids in skip.
func plansByKey(list []Plan, name string, start Date, skip map[int64]bool) []*Plan {
	var out []*Plan
	for i := range list {
		p := &list[i]
		if strings.TrimSpace(p.Name) == strings.TrimSpace(name) && p.StartDate == start && !skip[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

// Plan computes the ChangeSet for plans: it resolves companies and
// accounts, lists each account's plans once, retrieves the plans the input
// refers to and diffs each (see Diff). It sends only reads. The error is
// not nil only when the run must stop (fatal error or cancellation); the
// ChangeSet then holds what was computed, with the rest failed.
func (r *Runner) Plan(ctx context.Context, plans []*InputPlan) (*ChangeSet, error) {
	cs := &ChangeSet{Plans: make([]*PlanDiff, len(plans))}
	stopAll := func(err error) (*ChangeSet, error) {
		for i, p := range plans {
			if cs.Plans[i] == nil {
				cs.Plans[i] = Failed(p, "not compared: "+err.Error())
			}
		}
		return cs, err
	}
	routes, err := r.routePlans(ctx, plans)
	if err != nil {
		return stopAll(err)
	}
	byAccount := make([][]int, len(r.accounts))
	for i, rt := range routes {
		if rt.account < 0 {
			cs.Plans[i] = Failed(plans[i], rt.fail)
			cs.Plans[i].Company = rt.company
			continue
		}
		byAccount[rt.account] = append(byAccount[rt.account], i)
	}

	// List each account's plans once, concurrently across accounts.
	lists := make([][]Plan, len(r.accounts))
	listErrs := make([]error, len(r.accounts))
	ap := pool.New()
	for a, idx := range byAccount {
		if len(idx) == 0 {
			continue
		}
		ap.Go(func() { lists[a], listErrs[a] = r.accounts[a].Service.ListPlans(ctx) })
	}
	ap.Wait()
	if err := r.gate.stopErr(ctx); err != nil {
		return stopAll(err)
	}
	cs.Listed = map[string][]Plan{}
	for a, l := range lists {
		if listErrs[a] == nil && len(byAccount[a]) > 0 {
			cs.Listed[r.accounts[a].Name] = l
		}
	}

	// Match, then retrieve each referenced plan once.
	type want struct {
		account int
		id      int64
	}
	matched := make([]*Plan, len(plans))
	wanted := map[want]bool{}
	var order []want
	for a, idx := range byAccount {
		for _, i := range idx {
			if listErrs[a] != nil {
				cs.Plans[i] = Failed(plans[i], fmt.Sprintf("the plans of account %s could not be listed: %v", r.accounts[a].Name, listErrs[a]))
				continue
			}
			m, err := matchPlan(plans[i], lists[a], r.accounts[a].Name)
			if err != nil {
				cs.Plans[i] = Failed(plans[i], err.Error())
				continue
			}
			matched[i] = m
			if m != nil && !wanted[want{a, m.ID}] {
				wanted[want{a, m.ID}] = true
				order = append(order, want{a, m.ID})
			}
		}
	}
	full := make(map[want]*Plan, len(order))
	getErrs := make(map[want]error)
	var mu sync.Mutex
	gp := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for _, w := range order {
		gp.Go(func() {
			p, err := r.accounts[w.account].Service.GetPlan(ctx, w.id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				getErrs[w] = err
				return
			}
			full[w] = p
		})
	}
	gp.Wait()
	if err := r.gate.stopErr(ctx); err != nil {
		return stopAll(err)
	}

	// Diff, and refuse two input plans that land on the same stored plan
	// or would create the same plan.
	type createKey struct {
		account int
		name    string
		start   Date
	}
	claimed := map[any][]int{}
	for a, idx := range byAccount {
		for _, i := range idx {
			if cs.Plans[i] != nil {
				continue
			}
			var server *Plan
			if m := matched[i]; m != nil {
				w := want{a, m.ID}
				if err := getErrs[w]; err != nil {
					cs.Plans[i] = Failed(plans[i], fmt.Sprintf("plan %d of account %s could not be retrieved: %v", m.ID, r.accounts[a].Name, err))
					continue
				}
				server = full[w]
				claimed[w] = append(claimed[w], i)
			} else {
				k := createKey{a, strings.TrimSpace(plans[i].Name), plans[i].StartDate}
				claimed[k] = append(claimed[k], i)
			}
			d := Diff(plans[i], server, r.opts.Diff)
			d.Account = r.accounts[a].Name
			d.Company = routes[i].company
			cs.Plans[i] = d
		}
	}
	for _, idx := range claimed {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			var others []string
			for _, j := range idx {
				if j != i {
					others = append(others, plans[j].Origin.String())
				}
			}
			title := cs.Plans[i].Title()
			acct, comp := cs.Plans[i].Account, cs.Plans[i].Company
			cs.Plans[i] = Failed(plans[i], fmt.Sprintf("%s is also described at %s; describe each plan once (same plan_id, or same name and start date)",
				title, strings.Join(others, ", ")))
			cs.Plans[i].Account, cs.Plans[i].Company = acct, comp
		}
	}
	return cs, nil
}
