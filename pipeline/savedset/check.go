package savedset

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// maxSavedYear bounds a saved target's year number: a plan covers at most
// a few financial years (docs/apply-and-state.md, "Saved change sets").
const maxSavedYear = 100

// maxSavedText bounds the free text a change set records (titles, file
// names, cells).
const maxSavedText = 4096

// check validates every value of s as strictly as a workbook cell (docs/apply-and-state.md
// "Saved change sets"): counters are whole numbers from 0 to 2^53 named
// in cat, names and identifiers are checked as a workbook's, no name may
// start like a formula, fields and target types are the service's, and
// each account and plan appears where the set says. It also makes the
// counters' names share the catalog's strings. The error is a
// *SavedSetError listing what is wrong, by plan.
func (s *SavedChangeSet) check(cat *pipeline.Catalog) error {
	c := newSetChecker(s, cat)
	for i := range s.Plans {
		c.plan(i, &s.Plans[i])
	}
	return c.err()
}

// setChecker checks a change set's values as Check does, its header
// first, then one plan at a time (a set read in passes holds no more).
// What it keeps across plans is the accounts and the plans updated.
type setChecker struct {
	cat      *pipeline.Catalog
	problems []string
	accounts map[string]bool
	updated  map[string]bool
}

func (c *setChecker) bad(where, format string, a ...any) {
	if len(c.problems) < 200 {
		c.problems = append(c.problems, where+": "+fmt.Sprintf(format, a...))
	}
}

func (c *setChecker) err() error {
	if len(c.problems) > 0 {
		return &SavedSetError{Problems: c.problems}
	}
	return nil
}

// newSetChecker checks the header of s.
func newSetChecker(s *SavedChangeSet, cat *pipeline.Catalog) *setChecker {
	c := &setChecker{cat: cat, accounts: map[string]bool{}, updated: map[string]bool{}}
	bad := c.bad
	if s.Created.IsZero() {
		bad("the change set", "it gives no creation time")
	}
	if strings.TrimSpace(s.Service) == "" {
		bad("the change set", "it names no service")
	}
	accounts := c.accounts
	for i, a := range s.Accounts {
		if err := checkSavedText(a, pipeline.MaxIdentifierLen, false); err != nil || a == "" {
			bad("the change set", "account %q: not an account name", pipeline.Excerpt(a))
		}
		if accounts[a] {
			bad("the change set", "account %s is listed twice", a)
		}
		accounts[a] = true
		if i >= len(s.Keys) || s.Keys[i].Account != a {
			bad("the change set", "account %s has no signing record", a)
		}
	}
	if o := s.SignedOff; o != nil {
		if err := CheckSignerName(o.Signer); err != nil {
			bad("the change set's sign-off", "%v", err)
		}
		if _, err := ParsePublicKey(o.PublicKey); err != nil {
			bad("the change set's sign-off", "%v", err)
		}
	}
	if len(s.Keys) != len(s.Accounts) {
		bad("the change set", "it lists %d accounts but %d signing records", len(s.Accounts), len(s.Keys))
	}
	for _, f := range s.Files {
		if err := checkSavedText(f.Path, maxSavedText, false); err != nil {
			bad("the change set", "input file %q: %v", pipeline.Excerpt(f.Path), err)
		}
	}
	return c
}

// plan checks plan i of the set, and makes its counters' names share the
// catalog's strings.
func (c *setChecker) plan(i int, p *SavedPlan) {
	where := fmt.Sprintf("plan %d of the set", i+1)
	if err := checkSavedText(p.Title, maxSavedText, false); err != nil {
		c.bad(where, "title: %v", err)
	} else {
		where = fmt.Sprintf("%s (%s)", where, pipeline.Excerpt(p.Title))
	}
	if !c.accounts[p.Account] {
		c.bad(where, "account %q is not one the set was signed for", pipeline.Excerpt(p.Account))
	}
	c.action(where, p)
	c.fields(where, p)
	seenTarget := map[string]bool{}
	for k := range p.Targets {
		c.target(where, p, &p.Targets[k], seenTarget)
	}
}

// action checks what plan p does: an update of a stored plan, or a create
// with its request.
func (c *setChecker) action(where string, p *SavedPlan) {
	bad, updated := c.bad, c.updated
	switch p.Action {
	case diff.ActionUpdate:
		if p.PlanID <= 0 {
			bad(where, "an update must name a stored plan (plan_id %d)", p.PlanID)
		}
		key := fmt.Sprintf("%s\x00%d", p.Account, p.PlanID)
		if updated[key] {
			bad(where, "plan %d of account %s is updated twice", p.PlanID, p.Account)
		}
		updated[key] = true
		if p.Create != nil {
			bad(where, "an update cannot carry a create request")
		}
	case diff.ActionCreate:
		if p.PlanID != 0 {
			bad(where, "a plan to create has no plan_id (%d)", p.PlanID)
		}
		if p.Create == nil {
			bad(where, "the set creates a plan but gives no create request")
			break
		}
		cr := p.Create
		if err := checkSavedName(cr.Name); err != nil {
			bad(where, "name %q: %v", pipeline.Excerpt(cr.Name), err)
		}
		if cr.StartDate.IsZero() || cr.EndDate.IsZero() {
			bad(where, "a plan to create needs a start and an end date")
		} else if cr.EndDate.Before(cr.StartDate) {
			bad(where, "end date %s is before start date %s", cr.EndDate, cr.StartDate)
		}
		if err := checkSavedField("scorecard_id", cr.ScorecardID, true); err != nil {
			bad(where, "scorecard_id: %v", err)
		}
		if err := checkSavedField("sector", cr.Sector, true); err != nil {
			bad(where, "sector: %v", err)
		}
		if len(p.Fields) > 0 {
			bad(where, "a plan to create carries its fields in its create request")
		}
	default:
		bad(where, "action %q is neither update nor create", p.Action)
	}
}

// fields checks the plan fields p writes.
func (c *setChecker) fields(where string, p *SavedPlan) {
	bad := c.bad
	seenField := map[string]bool{}
	for _, f := range p.Fields {
		if seenField[f.Field] {
			bad(where, "field %q is written twice", pipeline.Excerpt(f.Field))
		}
		seenField[f.Field] = true
		if err := checkSavedField(f.Field, f.New, false); err != nil {
			bad(where, "%s: %v", pipeline.Excerpt(f.Field), err)
		}
		if err := checkSavedText(f.Expected, maxSavedText, true); err != nil {
			bad(where, "%s: the service value: %v", pipeline.Excerpt(f.Field), err)
		}
		for _, t := range []string{f.File, f.Cell} {
			if err := checkSavedText(t, maxSavedText, true); err != nil {
				bad(where, "%s: where it was read: %v", f.Field, err)
			}
		}
	}
}

// target checks target t of plan p (seen: the plan's targets so far),
// and makes its counters' names share the catalog's strings.
func (c *setChecker) target(where string, p *SavedPlan, t *SavedTarget, seenTarget map[string]bool) {
	bad := c.bad
	tw := fmt.Sprintf("%s year %d %s", where, t.YearNumber, pipeline.Excerpt(t.TargetType))
	if t.YearNumber < 1 || t.YearNumber > maxSavedYear {
		bad(tw, "year number %d is not from 1 to %d", t.YearNumber, maxSavedYear)
	}
	if !pipeline.Contains(pipeline.TargetTypes, t.TargetType) {
		bad(tw, "target type %q is not one of %s", pipeline.Excerpt(t.TargetType), strings.Join(pipeline.TargetTypes, ", "))
	}
	if t.FinancialYear != "" {
		if _, err := ParseFinancialYearText(t.FinancialYear); err != nil {
			bad(tw, "%v", err)
		}
	}
	if p.Action == diff.ActionUpdate && (t.MilestoneID <= 0 || t.TargetID <= 0) {
		bad(tw, "an update's target needs its milestone and target ids")
	}
	if p.Action == diff.ActionCreate && (t.MilestoneID != 0 || t.TargetID != 0) {
		bad(tw, "a plan to create has no milestone or target ids yet")
	}
	key := fmt.Sprintf("%d\x00%s", t.YearNumber, t.TargetType)
	if seenTarget[key] {
		bad(tw, "the target is written twice")
	}
	seenTarget[key] = true
	if err := checkSavedText(t.File, maxSavedText, true); err != nil {
		bad(tw, "file: %v", err)
	}
	if len(t.Counters) == 0 {
		bad(tw, "the target writes no counter")
	}
	seenCounter := map[string]bool{}
	for j := range t.Counters {
		ctr := &t.Counters[j]
		if k := c.cat.IndexOf(ctr.Counter); k >= 0 {
			ctr.Counter = c.cat.Names()[k]
		} else {
			bad(tw, "counter %q is not in the counter catalog", pipeline.Excerpt(ctr.Counter))
			continue
		}
		if seenCounter[ctr.Counter] {
			bad(tw, "counter %s is written twice", ctr.Counter)
		}
		seenCounter[ctr.Counter] = true
		if err := checkSavedCounter(ctr.New); err != nil {
			bad(tw, "%s: %v", ctr.Counter, err)
		}
		if ctr.Expected != nil {
			if err := checkSavedCounter(*ctr.Expected); err != nil {
				bad(tw, "%s: the service value: %v", ctr.Counter, err)
			}
		}
		if err := checkSavedText(ctr.Cell, maxSavedText, true); err != nil {
			bad(tw, "%s: cell: %v", ctr.Counter, err)
		}
	}
}

// checkSavedCounter checks a counter value as a workbook cell is checked:
// a whole number of 0 or more that a spreadsheet holds exactly.
func checkSavedCounter(n int64) error {
	switch {
	case n < 0:
		return fmt.Errorf("%d is negative; a counter must be a whole number of 0 or more", n)
	case n > pipeline.MaxExactInteger:
		return fmt.Errorf("%d is too large for a counter", n)
	}
	return nil
}

// checkSavedField checks the value of a plan field the set writes.
func checkSavedField(field, v string, blankOK bool) error {
	if v == "" {
		if blankOK || field != "name" {
			return nil
		}
	}
	switch field {
	case "name":
		return checkSavedName(v)
	case "sector":
		if v != "" && !pipeline.Contains(pipeline.Sectors, v) {
			return fmt.Errorf("%q is not one of the service's sectors", pipeline.Excerpt(v))
		}
		return nil
	case "scorecard_id":
		if err := checkSavedText(v, pipeline.MaxIdentifierLen, false); err != nil {
			return err
		}
		return pipeline.CheckNameText(v)
	}
	var names []string
	for _, f := range pipeline.PatchedPlanFields() {
		names = append(names, f.Name)
	}
	return fmt.Errorf("the field %q is not one apply writes (%s)", pipeline.Excerpt(field), strings.Join(names, ", "))
}

// checkSavedName checks a plan name as a workbook's plan_name cell is
// checked (checkNameText).
func checkSavedName(v string) error {
	if v == "" {
		return nil // a blank name: the service derives one
	}
	if err := checkSavedText(v, pipeline.MaxPlanNameLen, false); err != nil {
		return err
	}
	return pipeline.CheckNameText(v)
}

// checkSavedText checks recorded text: UTF-8, no control characters, no
// spreadsheet error value, trimmed, at most max characters.
func checkSavedText(v string, max int, free bool) error {
	if v == "" {
		return nil
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("the text holds bytes that are not UTF-8 characters")
	}
	if n := utf8.RuneCountInString(v); n > max {
		return fmt.Errorf("%d characters long; at most %d are allowed", n, max)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return fmt.Errorf("%q holds a control character", pipeline.Excerpt(v))
	}
	if free {
		return nil
	}
	if strings.TrimSpace(v) != v {
		return fmt.Errorf("%q has leading or trailing spaces", pipeline.Excerpt(v))
	}
	if msg, isErr := pipeline.ValErrorMessage(v); isErr {
		return fmt.Errorf("%s", msg)
	}
	return nil
}
