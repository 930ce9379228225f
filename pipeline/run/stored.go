package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/sourcegraph/conc/pool"
)

// This file is the one door through which eepipe reads an account's
// stored plans: apply (Runner.PlanApply, and its creates and recreates
// through findRecreated, findCreated and readBack), diff and reconcile
// (Runner.Plan), export
// (Runner.ReadStored), `check --server` (Runner.ReadStored and
// Runner.FillFromStored), the counter catalog (Runner.ServiceCatalog) and
// a saved change set's drift check and writes (savedList, savedPlan) all
// list and retrieve plans here, through the run's gate: the same
// bound on requests in flight, the same stop after a fatal error, the
// same request counts and progress.

// Apply's creates read an account again after the run's list, here too:
// the list the run keeps (listAccounts) predates the run's own writes. A
// recreate looks for the plan an earlier, unfinished recreate left
// (findRecreated); a create whose request got no clear answer looks for
// the plan it may have made (findCreated); both read back the plan they
// adopt or made (readBack). Each goes to the account's gated service, as
// every read here does.

// findRecreated looks, before a recreate creates its new plan, for a plan
// that an earlier recreate of the same plan created but did not finish
// (killed between its create and its delete, or its delete failed): a plan
// other than the old one with the new name, start date and end date. One
// such plan is adopted (read in full) and nil is returned when there is
// none. The plans must be listed for this: a list that fails fails the
// plan, since creating without knowing could make a duplicate.
func (r *Runner) findRecreated(ctx context.Context, svc pipeline.PlanService, d *diff.PlanDiff) (*pipeline.Plan, []string, error) {
	list, err := r.relist(ctx, svc)
	if err != nil {
		if errors.Is(err, pipeline.ErrStopped) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("the plans could not be listed to check for a plan left by an earlier recreate (%w); nothing was changed", err)
	}
	found := recreateLeftovers(list, d)
	switch len(found) {
	case 0:
		return nil, nil, nil
	case 1:
	default:
		return nil, nil, leftoversError(found, d.Server.ID)
	}
	full, err := r.readBack(ctx, svc, found[0].ID)
	if err != nil {
		return nil, nil, fmt.Errorf("plan %d, left with the new dates by an earlier recreate, could not be read: %w", found[0].ID, err)
	}
	return full, []string{leftoverAdoptedNote(full.ID, true)}, nil
}

// findCreated lists the account of svc again and returns its plans named
// name that start on start (matchPlans), but those in skip: the plan a
// create whose request got no clear answer may have made.
func (r *Runner) findCreated(ctx context.Context, svc pipeline.PlanService, name string, start pipeline.Date, skip map[int64]bool) ([]*pipeline.Plan, error) {
	list, err := r.relist(ctx, svc)
	if err != nil {
		return nil, err
	}
	return pipeline.MatchPlans(list, 0, name, start, skip), nil
}

// relist lists the plans of the account of svc (an account's gated
// service) afresh, past the list the run keeps.
func (r *Runner) relist(ctx context.Context, svc pipeline.PlanService) ([]pipeline.Plan, error) {
	return svc.ListPlans(ctx)
}

// readBack retrieves plan id of the account of svc (an account's gated
// service), with milestones and targets: a plan apply created or adopts.
// It is not one of the stored plans a run compares, so it is not counted
// in Progress.plansRead.
func (r *Runner) readBack(ctx context.Context, svc pipeline.PlanService, id int64) (*pipeline.Plan, error) {
	return svc.GetPlan(ctx, id)
}

// savedList lists the plans of the named account, for a saved change set
// that creates plans there (to find one that now exists).
func (r *Runner) savedList(ctx context.Context, account string) ([]pipeline.Plan, error) {
	return r.account(account).ListPlans(ctx)
}

// savedPlan retrieves plan id of the named account, with milestones and
// targets, for a saved change set to compare with: read once by its drift
// check and again before its writes, it is not counted in
// Progress.plansRead (as readBack's plans are not).
func (r *Runner) savedPlan(ctx context.Context, account string, id int64) (*pipeline.Plan, error) {
	return r.account(account).GetPlan(ctx, id)
}

// listAccounts lists the plans of the accounts that want marks (every
// account when want is nil), concurrently through the gate. Lists are kept
// for the run: an account is listed once.
func (r *Runner) listAccounts(ctx context.Context, want []bool) ([][]pipeline.Plan, []error) {
	lists := make([][]pipeline.Plan, len(r.accounts))
	errs := make([]error, len(r.accounts))
	p := pool.New() // the gate bounds the requests in flight
	for a := range r.accounts {
		if want != nil && !want[a] {
			continue
		}
		r.listMu.Lock()
		l, done := r.lists[a]
		r.listMu.Unlock()
		if done {
			lists[a], errs[a] = l.plans, l.err
			continue
		}
		p.Go(func() {
			plans, err := r.accounts[a].Service.ListPlans(ctx)
			if errors.Is(err, pipeline.ErrStopped) {
				lists[a], errs[a] = nil, err
				return // not listed: another call may list it
			}
			lists[a], errs[a] = plans, err
			r.listMu.Lock()
			r.lists[a] = listed{plans: plans, err: err}
			r.listMu.Unlock()
		})
	}
	p.Wait()
	return lists, errs
}

// listed is one account's plan list, or why it could not be listed.
type listed struct {
	plans []pipeline.Plan
	err   error
}

// storedRef names one stored plan: the index of its account and its id.
type storedRef struct {
	account int
	id      int64
}

// getPlans retrieves the plans refs name, with milestones and targets, at
// most RunOptions.Concurrency at a time through the gate. The answers are
// parallel to refs.
func (r *Runner) getPlans(ctx context.Context, refs []storedRef) ([]*pipeline.Plan, []error) {
	out := make([]*pipeline.Plan, len(refs))
	errs := make([]error, len(refs))
	p := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for i, ref := range refs {
		p.Go(func() { out[i], errs[i] = r.getOne(ctx, ref) })
	}
	p.Wait()
	return out, errs
}

// getOne retrieves the plan ref names, with milestones and targets,
// through the gate.
func (r *Runner) getOne(ctx context.Context, ref storedRef) (*pipeline.Plan, error) {
	p, err := r.accounts[ref.account].Service.GetPlan(ctx, ref.id)
	if err == nil && p != nil {
		r.read.Add(1)
		r.noteTarget(p)
	}
	return p, err
}

// noteTarget keeps the counter names of the first target the service
// returned: the service's counter catalog.
func (r *Runner) noteTarget(p *pipeline.Plan) {
	r.listMu.Lock()
	defer r.listMu.Unlock()
	if r.catalog == nil {
		r.catalog = pipeline.CatalogOfStored(p)
	}
}

// ServiceCatalog returns the counter catalog the service serves: the keys
// of the first target the run has retrieved, else of a target of the first
// stored plan found on the accounts the run has listed (else on every
// account): at most one read more. It
// returns nil, and no error, when no account holds a plan with targets:
// then nothing tells the catalog, and the caller keeps the built-in one.
// Accounts that cannot be listed are passed over; the error is not nil
// only when the run must stop.
func (r *Runner) ServiceCatalog(ctx context.Context) (*pipeline.Catalog, error) {
	r.listMu.Lock()
	c := r.catalog
	r.listMu.Unlock()
	if c != nil {
		return c, nil
	}
	// The accounts the run has listed already, else every account.
	var want []bool
	r.listMu.Lock()
	if len(r.lists) > 0 {
		want = make([]bool, len(r.accounts))
		for a := range r.lists {
			want[a] = true
		}
	}
	r.listMu.Unlock()
	lists, _ := r.listAccounts(ctx, want)
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, err
	}
	for a, l := range lists {
		for _, p := range l {
			got, errs := r.getPlans(ctx, []storedRef{{a, p.ID}})
			if errs[0] == nil && got[0] != nil {
				r.listMu.Lock()
				c := r.catalog
				r.listMu.Unlock()
				if c != nil {
					return c, nil
				}
			}
			if err := r.gate.stopErr(ctx); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// StoredPlan is a stored plan with its milestones and targets, and the
// account it was read from.
type StoredPlan struct {
	Account pipeline.Account
	Plan    *pipeline.Plan
}

// StoredQuery selects the plans ReadStored reads.
type StoredQuery struct {
	// PlanIDs limits the read to these plans, found in the accounts'
	// lists; empty reads every plan of every account.
	PlanIDs []int64
	// GoOnWhenRefused leaves out the plans of an account whose key pair
	// is refused (401) and reads the others' (StoredPlans.Refused names
	// it); without it, or when every account is refused, that is an
	// error. For reports that say what they could not read.
	GoOnWhenRefused bool

	// each, when set, receives every plan retrieved, in the order of
	// StoredPlans.Plans, as soon as it and the plans before it have
	// arrived, and StoredPlans.Plans stays empty: an export writes plan
	// by plan instead of holding them all. An error from Each stops the
	// read and is returned.
	each func(StoredPlan) error
}

// StoredPlans is what ReadStored read.
type StoredPlans struct {
	// Plans are in account order, then by plan id.
	Plans []StoredPlan
	// Missing are the PlanIDs no account lists.
	Missing []int64
	// vanished are plans listed but gone when retrieved (deleted
	// meanwhile); Plan holds the list's summary.
	vanished []StoredPlan
	// Refused are the accounts whose key pair was refused, with
	// StoredQuery.GoOnWhenRefused: their plans are not read.
	Refused []*pipeline.AccountRefusedError
}

// refused records err when it is an account's refused key pair and q
// lets the read go on without that account.
func (out *StoredPlans) refused(q StoredQuery, err error) bool {
	var ar *pipeline.AccountRefusedError
	if !q.GoOnWhenRefused || !errors.As(err, &ar) {
		return false
	}
	for _, r := range out.Refused {
		if r.Account == ar.Account {
			return true
		}
	}
	out.Refused = append(out.Refused, ar)
	return true
}

// ReadStored lists every account's plans and retrieves the selected ones
// with milestones and targets. Any failure to read is an error naming the
// account (and plan): a reader such as export must not go on with a part
// of the plans without saying so. The one exception, with
// StoredQuery.GoOnWhenRefused, is an account whose key pair is refused:
// it is named in StoredPlans.Refused and the others are read. After a
// fatal error (every account refused included) or cancellation no new
// request starts and the error is a *stoppedError.
func (r *Runner) ReadStored(ctx context.Context, q StoredQuery) (*StoredPlans, error) {
	lists, errs := r.listAccounts(ctx, nil)
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, err
	}
	out := &StoredPlans{}
	for a, err := range errs {
		if err != nil && !out.refused(q, err) {
			return nil, listError(r.accounts[a].Name, err)
		}
	}
	want := map[int64]bool{}
	for _, id := range q.PlanIDs {
		want[id] = true
	}
	found := map[int64]bool{}
	var refs []storedRef
	var summaries []pipeline.Plan
	for a, list := range lists {
		list = slices.Clone(list)
		slices.SortFunc(list, func(x, y pipeline.Plan) int { return cmpInt64(x.ID, y.ID) })
		for _, p := range list {
			if len(want) > 0 && !want[p.ID] {
				continue
			}
			found[p.ID] = true
			refs = append(refs, storedRef{a, p.ID})
			summaries = append(summaries, p)
		}
	}
	for _, id := range q.PlanIDs {
		if !found[id] && !slices.Contains(out.Missing, id) {
			out.Missing = append(out.Missing, id)
		}
	}
	if q.each != nil {
		return out, r.eachStored(ctx, refs, summaries, q, out)
	}
	got, getErrs := r.getPlans(ctx, refs)
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, err
	}
	for i, ref := range refs {
		acct := r.accounts[ref.account]
		switch err := getErrs[i]; {
		case err == nil:
			out.Plans = append(out.Plans, StoredPlan{Account: acct, Plan: got[i]})
		case errors.Is(err, pipeline.ErrNotFound):
			out.vanished = append(out.vanished, StoredPlan{Account: acct, Plan: &summaries[i]})
		case out.refused(q, err):
		default:
			return nil, getError(acct.Name, ref.id, err)
		}
	}
	return out, nil
}

// eachStored retrieves refs concurrently, as getPlans does, and hands
// each plan to each in the order of refs once it and every plan before it
// have arrived; a plan is let go once handed on. Vanished plans go to
// out.Vanished, and with q.GoOnWhenRefused a refused account's plans to
// out.Refused, as ReadStored does.
func (r *Runner) eachStored(ctx context.Context, refs []storedRef, summaries []pipeline.Plan, q StoredQuery, out *StoredPlans) error {
	each := q.each
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		got     = make([]*pipeline.Plan, len(refs))
		errs    = make([]error, len(refs))
		done    = make([]bool, len(refs))
		next    int
		stopErr error
	)
	// emit hands on the plans that are next in order; mu is held.
	emit := func() {
		for next < len(refs) && done[next] && stopErr == nil {
			i := next
			next++
			acct := r.accounts[refs[i].account]
			switch err := errs[i]; {
			case err == nil:
				if e := each(StoredPlan{Account: acct, Plan: got[i]}); e != nil {
					stopErr = e
					cancel()
				}
			case errors.Is(err, pipeline.ErrNotFound):
				out.vanished = append(out.vanished, StoredPlan{Account: acct, Plan: &summaries[i]})
			case out.refused(q, err):
			default:
				stopErr = getError(acct.Name, refs[i].id, err)
				cancel()
			}
			got[i], errs[i] = nil, nil
		}
	}
	p := pool.New().WithMaxGoroutines(r.opts.concurrency())
	for i, ref := range refs {
		p.Go(func() {
			mu.Lock()
			stopped := stopErr != nil
			mu.Unlock()
			var plan *pipeline.Plan
			var err error
			if stopped {
				err = context.Canceled
			} else if plan, err = r.accounts[ref.account].Service.GetPlan(ctx, ref.id); err == nil && plan != nil {
				r.read.Add(1)
				r.noteTarget(plan)
			}
			mu.Lock()
			defer mu.Unlock()
			got[i], errs[i], done[i] = plan, err, true
			emit()
		})
	}
	p.Wait()
	if stopErr != nil {
		return stopErr
	}
	return r.gate.stopErr(ctx)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// listError describes a failed list of an account's plans.
func listError(account string, err error) error {
	var refused *pipeline.AccountRefusedError
	if errors.As(err, &refused) {
		return err
	}
	return fmt.Errorf("listing the plans of account %s: %w", account, err)
}

// getError describes a failed read of a stored plan.
func getError(account string, id int64, err error) error {
	var refused *pipeline.AccountRefusedError
	if errors.As(err, &refused) {
		return err
	}
	return fmt.Errorf("reading plan %d of account %s: %w", id, account, err)
}

// FillFromStored returns the file plans with their blanks filled from the
// stored plans they match on any of the run's accounts (matchStoredPlan
// over every account's list; only the named account's plans when the file
// names the plan's account, as apply routes it), and a note per plan
// saying what was done.
// A plan that matches nothing or several stored plans is returned as it
// is, with a note. Any failure to read is an error naming the account.
func (r *Runner) FillFromStored(ctx context.Context, plans []*pipeline.InputPlan) ([]*pipeline.InputPlan, [][]string, error) {
	lists, errs := r.listAccounts(ctx, nil)
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, nil, err
	}
	var summaries []pipeline.Plan
	var owner []int
	for a, l := range lists {
		if errs[a] != nil {
			return nil, nil, listError(r.accounts[a].Name, errs[a])
		}
		l = slices.Clone(l)
		slices.SortFunc(l, func(x, y pipeline.Plan) int { return cmpInt64(x.ID, y.ID) })
		for _, p := range l {
			summaries = append(summaries, p)
			owner = append(owner, a)
		}
	}
	match := make([]int, len(plans))
	notes := make([][]string, len(plans))
	var refs []storedRef
	refIndex := map[int]int{} // summaries index -> refs index
	for i, p := range plans {
		match[i] = -1
		m := pipeline.MatchStoredPlan(p, summaries)
		if a := pipeline.AccountIndex(r.accounts, p.Account); p.Account != "" && a >= 0 {
			// The file names the plan's account (column account, grid label
			// Account): as apply does, only that account's plans are its.
			m = slices.DeleteFunc(m, func(j int) bool { return owner[j] != a })
		}
		switch len(m) {
		case 0:
			notes[i] = append(notes[i], "not found on the service, so blank counters stay unknown")
		case 1:
			match[i] = m[0]
			if _, ok := refIndex[m[0]]; !ok {
				refIndex[m[0]] = len(refs)
				refs = append(refs, storedRef{owner[m[0]], summaries[m[0]].ID})
			}
		default:
			var where []string
			for _, j := range m {
				where = append(where, fmt.Sprintf("plan %d of account %s", summaries[j].ID, r.accounts[owner[j]].Name))
			}
			notes[i] = append(notes[i], "matches several plans on the service ("+strings.Join(where, ", ")+"), so blank counters stay unknown")
		}
	}
	got, getErrs := r.getPlans(ctx, refs)
	if err := r.gate.stopErr(ctx); err != nil {
		return nil, nil, err
	}
	for k, err := range getErrs {
		if err != nil {
			return nil, nil, getError(r.accounts[refs[k].account].Name, refs[k].id, err)
		}
	}
	out := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		if match[i] < 0 {
			out[i] = p
			continue
		}
		k := refIndex[match[i]]
		out[i] = sector.FillFromServer(p, got[k])
		notes[i] = append(notes[i], fmt.Sprintf("blank values filled from plan %d on the service (account %s)", refs[k].id, r.accounts[refs[k].account].Name))
	}
	return out, notes, nil
}

// accountNames returns the names of the run's accounts, for messages.
func (r *Runner) accountNames() []string {
	names := make([]string, len(r.accounts))
	for i, a := range r.accounts {
		names[i] = a.Name
	}
	return names
}

// holders returns the accounts whose lists hold plan id.
func holders(lists [][]pipeline.Plan, id int64) []int {
	var out []int
	for a, l := range lists {
		if slices.ContainsFunc(l, func(p pipeline.Plan) bool { return p.ID == id }) {
			out = append(out, a)
		}
	}
	return out
}

// CheckServiceCatalog reports every counter the plans set that the
// service's catalog lacks, once per column (file, sheet and column): the
// service would refuse it. The error names the column.
func CheckServiceCatalog(plans []*pipeline.InputPlan, cat *pipeline.Catalog) pipeline.Problems {
	var ps pipeline.Problems
	seen := map[string]bool{}
	for _, p := range plans {
		for _, t := range p.Targets {
			for name := range t.Counters.All() {
				if cat.Has(name) {
					continue
				}
				o := t.CellOf(name)
				if o.File == "" {
					o = t.Origin
				}
				k := o.File + "|" + o.Sheet + "|" + name
				if seen[k] {
					continue
				}
				seen[k] = true
				col := o
				col.Header = name
				ps = append(ps, pipeline.Problem{Severity: pipeline.Error, Origin: col, Value: name, Code: pipeline.CodeUnknownCounter,
					Message: fmt.Sprintf("the column %s is a counter the service does not have (its targets carry %d counters); "+
						"remove the column, or give --catalog if the service's catalog is meant to differ", name, len(cat.Names())),
					Suggestions: cat.Suggest(name, 3)})
			}
		}
	}
	ps.Sort()
	return ps
}

// SetsCounters reports whether any of the plans sets a counter.
func SetsCounters(plans []*pipeline.InputPlan) bool {
	for _, p := range plans {
		for _, t := range p.Targets {
			if !t.Counters.IsEmpty() {
				return true
			}
		}
	}
	return false
}
