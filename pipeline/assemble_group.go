package pipeline

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// asmPlan collects one plan's rows.
// Its fields are by asmPlanColumns index: the first value given (set
// tells which are), as the plan holds it (the texts of plan_id and the
// dates, which it holds parsed, in raw), and where, in the plan's own
// fieldPlaces, so that the state held for each plan while the rows are
// read is small (a table of 10,000 plans holds 10,000 of them).
type asmPlan struct {
	plan    *InputPlan
	raw     [3]string // the texts of plan_id, start_date and end_date
	set     uint16    // bit i: the plan column of index i (and plan.fieldPlaces[i]) given
	endBad  bool      // an end_date was written but is invalid (reported at its cell)
	targets []*InputTarget
}

// field returns the first value given for the plan column of index i and
// where, and whether one was.
func (acc *asmPlan) field(i int) (string, fieldPlace, bool) {
	if acc.set&(1<<i) == 0 {
		return "", fieldPlace{}, false
	}
	return *acc.value(i), acc.plan.fieldPlaces[i], true
}

// value returns where the first value of the plan column of index i is
// held: the plan's own field, or raw.
func (acc *asmPlan) value(i int) *string {
	p := acc.plan
	switch asmPlanColumns[i] {
	case ColAccount:
		return &p.Account
	case ColCompanyVAT:
		return &p.Company.VAT
	case ColCompanyRegistration:
		return &p.Company.Registration
	case ColCompanyIDNumber:
		return &p.Company.IDNumber
	case ColPlanName:
		return &p.Name
	case ColSector:
		return &p.Sector
	case ColScorecardID:
		return &p.ScorecardID
	case ColPlanID:
		return &acc.raw[0]
	case ColStartDate:
		return &acc.raw[1]
	default: // ColEndDate
		return &acc.raw[2]
	}
}

// planKey returns the key of the record's plan: its plan_id, else its
// account, company, name and start date. It reports false when the key
// has an error (the record then belongs to no plan).
func (a *Assembler) planKey(rec *Record, v *asmRowValues) (PlanKey, bool) {
	switch {
	case v.planIDBad:
		return PlanKey{}, false
	case v.planID != 0:
		return PlanKey{planID: v.planID}, true
	case v.nameBad:
		return PlanKey{}, false
	case v.name == "":
		o := rec.Origin
		if c, ok := rec.cell(ColPlanName); ok {
			o = asmOriginOf(c, *rec, ColPlanName)
		}
		a.errorf(o, "", "the row has neither plan_id nor plan_name: give the id of an existing plan, or the name (with start_date and end_date) of a new one")
		return PlanKey{}, false
	case v.startBad:
		return PlanKey{}, false
	default:
		return PlanKey{account: v.account, company: v.company, name: v.name, startDate: v.start}, true
	}
}

// planFor returns the plan filed under key, starting it at rec when it is
// the first of its rows.
func (a *Assembler) planFor(key PlanKey, rec *Record) *asmPlan {
	kb := a.planIndexKey(key)
	acc := a.byKey[string(kb)]
	if acc == nil {
		acc = &asmPlan{plan: &InputPlan{Origin: asmKeep(rec.Origin)}}
		a.byKey[string(kb)] = acc
		a.plans = append(a.plans, acc)
	}
	return acc
}

// mergePlanFields gives the plan the plan columns the record states,
// reporting a value that disagrees with an earlier row of the plan.
func (a *Assembler) mergePlanFields(acc *asmPlan, rec *Record, v *asmRowValues) {
	acc.endBad = acc.endBad || v.endBad
	if acc.plan.companyCell.Cell == "" && v.companyAt.Cell != "" {
		acc.plan.companyCell = asmKeep(v.companyAt)
	}
	for i, col := range asmPlanColumns {
		if !v.givenSet[i] {
			continue
		}
		val := v.given[i]
		if value, place, set := acc.field(i); set {
			if !asmSameField(col, value, val) {
				c, _ := rec.cell(col)
				o := asmOriginOf(c, *rec, col)
				a.errorf(o, val, "%s disagrees with an earlier row of the same plan: %q at %s, %q here; every row of a plan must give the same %s", col, Excerpt(value), asmRef(place.origin(), o), Excerpt(val), col)
			}
			continue
		}
		// The plan keeps its own copy of the text, not the reader's
		// buffer (a CSV line) it may be part of.
		a.setPlanField(acc, rec, v, i, strings.Clone(val))
	}
}

// setPlanField sets the plan's field i of asmPlanColumns to val, the
// record's value, and keeps the place of its cell.
func (a *Assembler) setPlanField(acc *asmPlan, rec *Record, v *asmRowValues, i int, val string) {
	col := asmPlanColumns[i]
	c, _ := rec.cell(col)
	pl := a.place(asmOriginOf(c, *rec, col), rec.Origin.Row, "")
	p := acc.plan
	if p.fieldPlaces == nil {
		p.fieldPlaces = new([asmNumPlanColumns]fieldPlace)
	}
	*acc.value(i), acc.set = val, acc.set|1<<i
	p.fieldPlaces[i] = fieldPlace{at: pl.at, row: int32(rec.Origin.Row), onRow: pl.onRow}
	switch col {
	case ColPlanID:
		p.PlanID = v.planID
	case ColAccount:
		p.Account = val
		p.accountOrigin = p.fieldPlaces[i].origin()
	case ColCompanyVAT:
		p.Company.VAT = val
	case ColCompanyRegistration:
		p.Company.Registration = val
	case ColCompanyIDNumber:
		p.Company.IDNumber = val
	case ColPlanName:
		p.Name = val
	case ColStartDate:
		p.StartDate = v.start
	case ColEndDate:
		p.EndDate = v.end
	case ColSector:
		p.Sector = val
	case ColScorecardID:
		p.ScorecardID = val
	}
}

// planIndexKey encodes k as byKey's key. Rows are one plan by the rules
// matching uses: the company identifiers as sameIdentifier compares them
// (IdentifierKey: "2011/004512/07" is "2011-004512-07"), the account and
// plan names as sameName does (nameKey). Each string ends in 0xff, a byte
// no key holds (the keys are UTF-8), so that no two keys encode alike. The
// bytes are the assembler's buffer, valid until the next call. (A PlanKey
// is 112 bytes; the usual key is a third of that, and a table of 10,000
// plans holds 10,000 of them until the read ends.)
func (a *Assembler) planIndexKey(k PlanKey) []byte {
	b := binary.AppendVarint(a.keyBuf[:0], k.planID)
	b = append(appendNameKey(b, k.account), 0xff)
	for _, s := range [...]string{k.company.VAT, k.company.Registration, k.company.IDNumber} {
		b = append(appendIdentifierKey(b, s), 0xff)
	}
	b = append(appendNameKey(b, k.name), 0xff)
	b = binary.AppendVarint(b, int64(k.startDate.Year))
	b = binary.AppendVarint(b, int64(k.startDate.Month))
	b = binary.AppendVarint(b, int64(k.startDate.Day))
	a.keyBuf = b
	return b
}

// splitPlans reports rows that describe one plan but fall under two plan
// keys: the same name and start date with company identifiers that do not
// contradict each other, where one set of rows gives more identifiers, or
// a plan_id, than the other. Applied as they are, they would create a
// second plan instead of updating the first.
//
// The plans are grouped by name and start date by a stable sort (a slice
// of pointers, rather than a map of every plan), so that each plan meets
// the earlier plans of its group in the order they were read.
func (a *Assembler) splitPlans() {
	// Each plan with its name as sameName compares it (nameKey).
	type named struct {
		key string
		p   *InputPlan
	}
	plans := make([]named, 0, len(a.plans))
	for _, acc := range a.plans {
		if p := acc.plan; p.Name != "" && !p.StartDate.IsZero() {
			plans = append(plans, named{nameKey(p.Name), p})
		}
	}
	same := func(p, q named) int {
		if c := strings.Compare(p.key, q.key); c != 0 {
			return c
		}
		return p.p.StartDate.compare(q.p.StartDate)
	}
	slices.SortStableFunc(plans, same)
	for i := 0; i < len(plans); {
		j := i + 1
		for j < len(plans) && same(plans[i], plans[j]) == 0 {
			j++
		}
		group := plans[i:j]
		for k, pk := range group {
			p := pk.p
			for _, qk := range group[:k] {
				q := qk.p
				if !asmCompatible(q.Company, p.Company) || (q.PlanID != 0 && p.PlanID != 0) {
					continue
				}
				a.errorf(p.Origin, "", "this row and the row at %s describe the same plan %q starting %s, but give different identifiers (%s there, %s here): every row of a plan must give the same plan_id and company identifiers, or the plan would be created twice",
					asmRef(q.Origin, p.Origin), p.Name, p.StartDate, asmIdentifiers(q), asmIdentifiers(p))
				break
			}
		}
		i = j
	}
}

// asmCompatible reports whether two sets of company identifiers can name
// the same company: no identifier given in both differs (sameIdentifier).
func asmCompatible(a, b CompanyIDs) bool {
	same := func(x, y string) bool { return x == "" || y == "" || sameIdentifier(x, y) }
	return same(a.VAT, b.VAT) && same(a.Registration, b.Registration) && same(a.IDNumber, b.IDNumber)
}

// asmSameField reports whether two rows of one plan give the same value
// for the plan column col: company identifiers as sameIdentifier compares
// them and the account as sameName does (the rules the plan's key and
// apply's routing use, so two spellings of one identifier are one plan,
// not a disagreement); any other column exactly, since its text is what
// is sent (two spellings of a plan name would leave it to chance which
// one the service keeps).
func asmSameField(col, x, y string) bool {
	return PlanColumnKey(col, x) == PlanColumnKey(col, y)
}

// PlanColumnKey is the text by which the value of plan column col groups
// rows into plans: a company identifier's IdentifierKey (when it has a
// letter or digit), the account's nameKey, any other column's text trimmed
// (it is sent as it is). A reader that gathers lines into records (the
// long layout) keys them by it, as the assembler keys plans.
func PlanColumnKey(col, value string) string {
	switch col {
	case ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber:
		if k := IdentifierKey(value); k != "" {
			return k
		}
	case ColAccount:
		return nameKey(value)
	}
	return strings.TrimSpace(value)
}

func asmIdentifiers(p *InputPlan) string {
	var parts []string
	if p.PlanID != 0 {
		parts = append(parts, fmt.Sprintf("plan_id %d", p.PlanID))
	}
	if !p.Company.IsZero() {
		parts = append(parts, p.Company.String())
	}
	if len(parts) == 0 {
		return "no plan_id or company"
	}
	return strings.Join(parts, ", ")
}

func (a *Assembler) fieldOrigin(acc *asmPlan, col string) Origin {
	if _, place, set := acc.field(asmPlanColumnIndex(col)); set {
		return place.origin()
	}
	return acc.plan.Origin
}
