package pipeline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matchPlans is the one rule by which a plan described in a file (or a
// plan about to be created) is found among an account's stored plans. diff,
// apply, reconcile, check --server and the adoption of a create whose
// answer was lost all use it, so that they never disagree:
//
//   - With a plan id (id != 0): the stored plan with that id, and nothing
//     else, whatever its name.
//   - Otherwise by name and start date, both required: the plans whose
//     name equals name after trimming spaces at both ends and that start
//     on start. When no name is equal, the names equal apart from letter
//     case (Unicode case folding) count instead.
//
// Plans whose ids are in skip are left out (the old plan of a recreate).
// The result is every candidate: none (the plan is not there), one (the
// match), or several (ambiguous: never guessed, whichever rule found them).
func MatchPlans(list []Plan, id int64, name string, start Date, skip map[int64]bool) []*Plan {
	var out []*Plan
	if id != 0 {
		for i := range list {
			if list[i].ID == id && !skip[id] {
				out = append(out, &list[i])
			}
		}
		return out
	}
	name = strings.TrimSpace(name)
	if name == "" || start.IsZero() {
		return nil
	}
	var folded []*Plan
	for i := range list {
		p := &list[i]
		if p.StartDate != start || skip[p.ID] {
			continue
		}
		switch stored := strings.TrimSpace(p.Name); {
		case stored == name:
			out = append(out, p)
		case strings.EqualFold(stored, name):
			folded = append(folded, p)
		}
	}
	if len(out) == 0 {
		return folded
	}
	return out
}

// sameName reports whether two plan names are the same name by the rule of
// matchPlans: equal after trimming spaces, ignoring letter case. Account
// names are compared by it too.
func SameName(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// nameKey is the form of a name that sameName compares: sameName(a, b) is
// nameKey(a) == nameKey(b). Rows are grouped into plans by it (with the
// company identifiers' IdentifierKey), and apply keys the plans it would
// create by it, so that a file's plans are counted alike everywhere.
func NameKey(s string) string {
	return string(AppendNameKey(nil, s))
}

// appendNameKey appends nameKey(s) to b: s trimmed, each letter replaced
// by the least rune of its case-folding orbit (the orbit strings.EqualFold
// compares by), so that names equal apart from letter case key alike.
func AppendNameKey(b []byte, s string) []byte {
	for _, r := range strings.TrimSpace(s) {
		if r < utf8.RuneSelf {
			// ASCII: a letter's orbit starts at its upper case (K and
			// k before the Kelvin sign, S and s before the long s).
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b = append(b, byte(r))
			continue
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
	}
	return b
}

// matchPlan finds the stored plan an input plan refers to in an account's
// plan list (matchPlans). It returns nil and no error when the plan is not
// there (to be created), and an error for an unknown plan id or an
// ambiguous name.
//
// A plan_id that is no longer on the account while exactly one plan with
// a newer (greater) id has the file's name and start date is the trace of
// a recreate (apply --recreate-on-date-change deletes the old plan and
// creates a new one, which the service numbers after it): that plan is the
// match, and note says so and how to refresh the workbook, rather than
// failing every run until someone edits the plan_id. Any other plan_id
// that the account does not hold (a typo, a plan id that never existed, a
// plan of another account: an id greater than the plan of that name) is
// an error for that plan: a plan_id is never
// redirected to an older plan.
func MatchPlan(in *InputPlan, list []Plan, account string) (m *Plan, note string, err error) {
	matches := MatchPlans(list, in.PlanID, in.Name, in.StartDate, nil)
	switch {
	case len(matches) == 1:
		return matches[0], "", nil
	case len(matches) == 0 && in.PlanID != 0:
		byName := MatchPlans(list, 0, in.Name, in.StartDate, nil)
		if len(byName) == 1 && byName[0].ID > in.PlanID {
			n := byName[0]
			return n, fmt.Sprintf("plan_id %d is no longer on account %s, but plan %d there has the file's name %q and start date %s "+
				"(the plan was recreated as plan %d, as apply --recreate-on-date-change does): plan %d is used. "+
				"Put plan_id %d in the workbook, or refresh the workbook with eepipe export --plan %d",
				in.PlanID, account, n.ID, strings.TrimSpace(n.Name), n.StartDate, n.ID, n.ID, n.ID, n.ID), nil
		}
		return nil, "", fmt.Errorf("plan %d is not on account %s (it may have been deleted, or belong to another account); "+
			"remove the plan_id to create the plan again", in.PlanID, account)
	case len(matches) == 0:
		return nil, "", nil
	}
	return nil, "", ambiguousPlanError(matches, account, in.Name, in.StartDate)
}

// ambiguousPlanError is the failure of a name and start date that match
// several stored plans.
func ambiguousPlanError(matches []*Plan, account, name string, start Date) error {
	ids := make([]string, len(matches))
	caseOnly := false
	for i, m := range matches {
		ids[i] = fmt.Sprint(m.ID)
		caseOnly = caseOnly || strings.TrimSpace(m.Name) != strings.TrimSpace(name)
	}
	how := fmt.Sprintf("are all named %q", strings.TrimSpace(name))
	if caseOnly {
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = fmt.Sprintf("%q", strings.TrimSpace(m.Name))
		}
		how = fmt.Sprintf("are named %s, which differ from %q only in letter case,", strings.Join(names, ", "), strings.TrimSpace(name))
	}
	return fmt.Errorf("ambiguous plan: plans %s on account %s %s and start %s; "+
		"put the plan_id of the one to update in the file", strings.Join(ids, ", "), account, how, start)
}

// matchStoredPlan finds the stored plan a file plan describes, by the rule
// of matchPlans. It returns the indexes of every match; more than one means
// the match is ambiguous.
func MatchStoredPlan(p *InputPlan, stored []Plan) []int {
	var out []int
	for _, m := range MatchPlans(stored, p.PlanID, p.Name, p.StartDate, nil) {
		for i := range stored {
			if &stored[i] == m {
				out = append(out, i)
			}
		}
	}
	return out
}
