package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/sourcegraph/conc/pool"
)

// LookupCompany looks a company up by ids with find, as apply routes a
// plan and as the companies command searches: the spelling given, and when
// it finds nothing, its standardSpelling ("2015-123456-07" is
// "2015/123456/07" by sameIdentifier, but the lookup matches spellings
// exactly). It returns the records and the spelling that found them.
func LookupCompany[R any](ctx context.Context, ids pipeline.CompanyIDs, find func(context.Context, pipeline.CompanyIDs) ([]R, error)) ([]R, pipeline.CompanyIDs, error) {
	recs, err := find(ctx, ids)
	if std := pipeline.StandardSpelling(ids); err == nil && len(recs) == 0 && std != ids {
		recs, err = find(ctx, std)
		if len(recs) > 0 {
			return recs, std, err
		}
	}
	return recs, ids, err
}

// route is where one input plan goes: an account index, or a failure.
type route struct {
	account int // index into Runner.accounts; -1 when failed
	company *pipeline.Company
	fail    string
}

// routePlans resolves the companies (one lookup per distinct identifier
// set, as sameIdentifier compares identifiers: the first spelling read is
// the one looked up, and when it finds nothing, its standardSpelling) and
// picks each plan's account. It returns an error only when the
// run must stop (a fatal lookup error or cancellation).
func (r *Runner) routePlans(ctx context.Context, plans []*pipeline.InputPlan) ([]route, error) {
	need := r.finder != nil
	var sets []pipeline.CompanyIDs
	seen := map[pipeline.CompanyIDs]bool{}
	for _, p := range plans {
		if k := pipeline.CompanyKey(p.Company); need && !p.Company.IsZero() && !seen[k] {
			seen[k] = true
			sets = append(sets, p.Company)
		}
	}
	type lookup struct {
		company *pipeline.Company
		err     error
	}
	results := make(map[pipeline.CompanyIDs]lookup, len(sets))
	var mu sync.Mutex
	wp := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for _, ids := range sets {
		wp.Go(func() {
			recs, _, err := LookupCompany(ctx, ids, r.finder.FindCompanies)
			var l lookup
			if err != nil {
				l.err = fmt.Errorf("company lookup for %s failed: %w", ids, err)
			} else {
				l.company, l.err = pipeline.ResolveCompany(ids, recs)
			}
			mu.Lock()
			results[pipeline.CompanyKey(ids)] = l
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
			l, looked = results[pipeline.CompanyKey(p.Company)], true
			rt.company = l.company
		}
		named := -1
		if p.Account != "" {
			named = pipeline.AccountIndex(r.accounts, p.Account)
		}
		switch {
		case len(r.accounts) == 0:
			rt.fail = "no account is configured"
		case p.Account != "" && named < 0:
			rt.fail = fmt.Sprintf("the file names account %q, which is not configured; the configured account%s %s",
				p.Account, pipeline.PluralNoun(len(r.accounts), " is", "s are"), strings.Join(r.accountNames(), ", "))
		case looked && l.err != nil:
			rt.fail = l.err.Error()
		case named >= 0:
			// The account column decides; the company, when known, must agree.
			rt.fail = r.companyDisagrees(p, named, rt.company)
			if rt.fail == "" {
				rt.account = named
			}
		case len(r.accounts) == 1:
			a := r.accounts[0]
			switch {
			case looked && a.CompanyID != "" && l.company.ID != a.CompanyID:
				rt.fail = fmt.Sprintf("the company columns name %s, but the configured account %s belongs to company %s; "+
					"a plan is only written with its own company's account", pipeline.DescribeCompany(*l.company), a.Name, a.CompanyID)
			default:
				rt.account = 0
			}
		case looked:
			idx := slices.IndexFunc(r.accounts, func(a pipeline.Account) bool { return a.CompanyID == l.company.ID })
			if idx < 0 {
				rt.fail = fmt.Sprintf("no configured account belongs to %s; add an account with company_id %s to the configuration",
					pipeline.DescribeCompany(*l.company), l.company.ID)
			} else {
				rt.account = idx
			}
		case p.PlanID != 0:
			rt.account = routeByPlanID // decided once every account is listed
		case p.Company.IsZero():
			rt.fail = "the plan has no company identifier, no account and no plan_id, and with several accounts one of them decides the account"
		default:
			rt.fail = "with several accounts the company lookup must be configured to find the plan's account (or give the plan's account or plan_id)"
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
func guardUnknownCompany(accounts []pipeline.Account, routes []route) {
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

// routeByPlanID marks a route decided by the account that holds the
// plan's plan_id, once every account is listed.
const routeByPlanID = -2

// companyDisagrees returns why plan p cannot go to account a, or "": the
// company the lookup found (company) must be the account's company_id,
// and company columns must agree with the identifiers the configuration
// gives for the account. A disagreement is an error, never a guess.
func (r *Runner) companyDisagrees(p *pipeline.InputPlan, a int, company *pipeline.Company) string {
	acct := r.accounts[a]
	why := "the account column"
	if p.Account == "" {
		why = fmt.Sprintf("plan_id %d (held by account %s)", p.PlanID, acct.Name)
	}
	switch {
	case company != nil && acct.CompanyID != "" && company.ID != acct.CompanyID:
		return fmt.Sprintf("%s names account %s, whose company is %s, but the company columns name %s; correct one of them",
			why, acct.Name, acct.CompanyID, pipeline.DescribeCompany(*company))
	case !p.Company.IsZero() && !acct.Company.IsZero() && !pipeline.SameCompanyIDs(p.Company, acct.Company) && company == nil:
		return fmt.Sprintf("%s names account %s, whose configured company identifiers are %s, but the company columns give %s; correct one of them",
			why, acct.Name, acct.Company, p.Company)
	}
	return ""
}

// routeByPlanIDs decides the routes marked routeByPlanID: the one account
// whose list holds the plan id. A plan id held by no account, or by
// several, fails that plan.
func (r *Runner) routeByPlanIDs(plans []*pipeline.InputPlan, routes []route, lists [][]pipeline.Plan, errs []error) {
	var unlisted []string
	for a, err := range errs {
		if err != nil {
			unlisted = append(unlisted, fmt.Sprintf("%s (%v)", r.accounts[a].Name, err))
		}
	}
	for i := range routes {
		if routes[i].account != routeByPlanID {
			continue
		}
		p := plans[i]
		routes[i].account = -1
		held := holders(lists, p.PlanID)
		switch {
		case len(held) == 1:
			if why := r.companyDisagrees(p, held[0], routes[i].company); why != "" {
				routes[i].fail = why
			} else {
				routes[i].account = held[0]
			}
		case len(held) > 1:
			names := make([]string, len(held))
			for k, a := range held {
				names[k] = r.accounts[a].Name
			}
			routes[i].fail = fmt.Sprintf("plan %d is held by several configured accounts (%s); add the account column to say which one is meant",
				p.PlanID, strings.Join(names, ", "))
		case len(unlisted) > 0:
			routes[i].fail = fmt.Sprintf("plan %d is on none of the accounts that could be listed, and these could not be listed: %s",
				p.PlanID, strings.Join(unlisted, "; "))
		default:
			routes[i].fail = fmt.Sprintf("plan %d is on none of the configured accounts (%s); it may have been deleted: "+
				"remove the plan_id to create the plan again (with the account column or company columns to choose its account)",
				p.PlanID, strings.Join(r.accountNames(), ", "))
		}
	}
}

// Plan computes the ChangeSet for plans: it resolves companies and
// accounts, lists each account's plans once, retrieves the plans the input
// refers to and diffs each (see Diff). It sends only reads. The error is
// not nil only when the run must stop (fatal error or cancellation); the
// ChangeSet then holds what was computed, with the rest failed.
func (r *Runner) Plan(ctx context.Context, plans []*pipeline.InputPlan) (*diff.ChangeSet, error) {
	pr, err := r.prepare(ctx, plans, nil)
	cs := pr.cs
	if err != nil {
		return pr.stopAll(err), err
	}
	// Retrieve each matched plan once: the duplicate-claim check failed
	// every plan that shares its stored plan with another.
	var refs []storedRef
	var of []int
	for i, m := range pr.matched {
		if cs.Plans[i] == nil && m != nil {
			refs = append(refs, storedRef{pr.routes[i].account, m.ID})
			of = append(of, i)
		}
	}
	got, errs := r.getPlans(ctx, refs)
	if err := r.gate.stopErr(ctx); err != nil {
		return pr.stopAll(err), err
	}
	server := make([]*pipeline.Plan, len(plans))
	for k, i := range of {
		if errs[k] != nil {
			cs.Plans[i] = pr.getFailed(i, errs[k])
			continue
		}
		server[i] = got[k]
	}
	for i := range plans {
		if cs.Plans[i] == nil {
			cs.Plans[i] = pr.diff(i, server[i])
		}
	}
	r.planLeftovers(ctx, cs) // what a recreate will adopt, as apply will
	return cs, nil
}

// prepared is a run's plans once routed, listed and matched, before any
// stored plan is read: cs.Plans holds the plans that failed so far (nil
// for the others), matched the stored plan (summary) each plan updates,
// nil for a plan to create.
type prepared struct {
	r       *Runner
	plans   []*pipeline.InputPlan
	cs      *diff.ChangeSet
	routes  []route
	matched []*pipeline.Plan
	notes   []string
}

// prepare routes plans to accounts, lists each account's plans once,
// matches each plan to its stored plan and fails the plans that two input
// plans claim (the same stored plan, or the same plan to create): all that
// needs the lists only, not the stored plans. lock, when not nil, is
// called once the plans are routed, with the accounts they go to, before
// the lists the matching reads are taken (lists taken before, to route by
// plan_id or to learn the catalog, are taken again); its error is returned
// as a *hookError. Otherwise the error is not nil only when the run must
// stop.
func (r *Runner) prepare(ctx context.Context, plans []*pipeline.InputPlan, lock func(context.Context, []string) error) (*prepared, error) {
	cs := &diff.ChangeSet{Plans: make([]*diff.PlanDiff, len(plans))}
	pr := &prepared{r: r, plans: plans, cs: cs, matched: make([]*pipeline.Plan, len(plans)), notes: make([]string, len(plans))}
	if err := pr.route(ctx); err != nil {
		return pr, err
	}
	byAccount := pr.byAccount()
	if lock != nil {
		if err := pr.lock(ctx, lock, byAccount); err != nil {
			return pr, err
		}
	}

	// List each account's plans once, concurrently across accounts.
	want := make([]bool, len(r.accounts))
	for a, idx := range byAccount {
		want[a] = len(idx) > 0
	}
	lists, listErrs := r.listAccounts(ctx, want)
	if err := r.gate.stopErr(ctx); err != nil {
		return pr, err
	}
	cs.Listed = map[string][]pipeline.Plan{}
	for a, l := range lists {
		if listErrs[a] == nil && len(byAccount[a]) > 0 {
			cs.Listed[r.accounts[a].Name] = l
		}
	}
	pr.failClaimedTwice(pr.match(byAccount, lists, listErrs))
	return pr, nil
}

// route routes the plans to accounts (routePlans), listing every account
// when a plan is routed by its plan_id.
func (pr *prepared) route(ctx context.Context) error {
	r := pr.r
	routes, err := r.routePlans(ctx, pr.plans)
	if err != nil {
		return err
	}
	pr.routes = routes
	// Plans routed by their plan_id need every account's list.
	for _, rt := range routes {
		if rt.account == routeByPlanID {
			lists, errs := r.listAccounts(ctx, nil)
			if err := r.gate.stopErr(ctx); err != nil {
				return err
			}
			r.routeByPlanIDs(pr.plans, routes, lists, errs)
			break
		}
	}
	return nil
}

// byAccount returns the indices of the plans routed to each account,
// failing the plans that found no account.
func (pr *prepared) byAccount() [][]int {
	byAccount := make([][]int, len(pr.r.accounts))
	for i, rt := range pr.routes {
		if rt.account < 0 {
			pr.cs.Plans[i] = diff.Failed(pr.plans[i], rt.fail)
			pr.cs.Plans[i].Company = rt.company
			continue
		}
		byAccount[rt.account] = append(byAccount[rt.account], i)
	}
	return byAccount
}

// lock calls the Lock hook with the accounts the plans go to (sorted; not
// at all when there is none) and forgets the lists taken before it, which
// may have changed since. Its error is a *hookError.
func (pr *prepared) lock(ctx context.Context, lock func(context.Context, []string) error, byAccount [][]int) error {
	r := pr.r
	var names []string
	for a, idx := range byAccount {
		if len(idx) > 0 {
			names = append(names, r.accounts[a].Name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil
	}
	if err := lock(ctx, names); err != nil {
		return &hookError{err}
	}
	// What was listed before the lock may have changed since.
	r.listMu.Lock()
	r.lists = map[int]listed{}
	r.listMu.Unlock()
	return nil
}

// prepClaim is what an input plan claims: a stored plan (prepStored) or a
// plan to create (prepCreate).
type (
	prepStored struct {
		account int
		id      int64
	}
	prepCreate struct {
		account int
		name    string // nameKey: the names matchPlans takes for one
		start   pipeline.Date
	}
)

// match matches each routed plan to its stored plan in its account's list
// (matchPlan), failing the plans whose account could not be listed or
// that match ambiguously, and returns the input plans by what they claim
// (a prepStored or a prepCreate).
func (pr *prepared) match(byAccount [][]int, lists [][]pipeline.Plan, listErrs []error) map[any][]int {
	r, cs, plans := pr.r, pr.cs, pr.plans
	claimed := map[any][]int{}
	for a, idx := range byAccount {
		for _, i := range idx {
			// A plan that fails here was routed: its account is known.
			if listErrs[a] != nil {
				cs.Plans[i] = diff.Failed(plans[i], listError(r.accounts[a].Name, listErrs[a]).Error())
				cs.Plans[i].Account = r.accounts[a].Name
				continue
			}
			m, note, err := pipeline.MatchPlan(plans[i], lists[a], r.accounts[a].Name)
			pr.notes[i] = note
			if err != nil {
				cs.Plans[i] = diff.Failed(plans[i], err.Error())
				cs.Plans[i].Account = r.accounts[a].Name
				continue
			}
			pr.matched[i] = m
			if m != nil {
				claimed[prepStored{a, m.ID}] = append(claimed[prepStored{a, m.ID}], i)
			} else {
				k := prepCreate{a, pipeline.NameKey(plans[i].Name), plans[i].StartDate}
				claimed[k] = append(claimed[k], i)
			}
		}
	}
	return claimed
}

// failClaimedTwice fails the input plans that land on the same stored
// plan or would create the same plan as another.
func (pr *prepared) failClaimedTwice(claimed map[any][]int) {
	r, cs, plans := pr.r, pr.cs, pr.plans
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
			a := pr.routes[i].account
			title := (&diff.PlanDiff{Input: plans[i], Server: pr.matched[i]}).Title()
			cs.Plans[i] = diff.Failed(plans[i], fmt.Sprintf("%s is also described at %s; describe each plan once (same plan_id, or same name and start date)",
				title, strings.Join(others, ", ")))
			cs.Plans[i].Account, cs.Plans[i].Company = r.accounts[a].Name, pr.routes[i].company
		}
	}
}

// stopAll fails every plan not failed yet: the run stopped with err
// before it was compared.
func (pr *prepared) stopAll(err error) *diff.ChangeSet {
	for i, p := range pr.plans {
		if pr.cs.Plans[i] == nil {
			pr.cs.Plans[i] = diff.Failed(p, "not compared: "+err.Error())
		}
	}
	return pr.cs
}

// getFailed is the diff of plan i whose stored plan could not be read.
func (pr *prepared) getFailed(i int, err error) *diff.PlanDiff {
	name := pr.r.accounts[pr.routes[i].account].Name
	d := diff.Failed(pr.plans[i], getError(name, pr.matched[i].ID, err).Error())
	d.Account = name
	return d
}

// diff compares plan i with its stored plan server (nil: to create).
func (pr *prepared) diff(i int, server *pipeline.Plan) *diff.PlanDiff {
	d := diff.Diff(pr.plans[i], server, pr.r.opts.Diff)
	d.Account = pr.r.accounts[pr.routes[i].account].Name
	d.Company = pr.routes[i].company
	if pr.notes[i] != "" {
		d.Notes = append(d.Notes, pr.notes[i])
	}
	return d
}

// hookError is the error of a caller's hook that stopped the run.
type hookError struct{ err error }

func (e *hookError) Error() string { return e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

// accounts returns, sorted, the accounts of the plans still to compare:
// those an apply may write to or record.
func (pr *prepared) accounts() []string {
	var names []string
	for i, d := range pr.cs.Plans {
		if d != nil {
			continue
		}
		if n := pr.r.accounts[pr.routes[i].account].Name; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
