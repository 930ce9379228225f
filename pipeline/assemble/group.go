package assemble

import (
	"encoding/binary"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
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
	plan    *pipeline.InputPlan
	raw     [3]string // the texts of plan_id, start_date and end_date
	set     uint16    // bit i: the plan column of index i (and plan.fieldPlaces[i]) given
	endBad  bool      // an end_date was written but is invalid (reported at its cell)
	targets []*pipeline.InputTarget
}

// field returns the first value given for the plan column of index i and
// where, and whether one was.
func (acc *asmPlan) field(i int) (string, pipeline.FieldPlace, bool) {
	if acc.set&(1<<i) == 0 {
		return "", pipeline.FieldPlace{}, false
	}
	return *acc.value(i), acc.plan.FieldPlaces[i], true
}

// value returns where the first value of the plan column of index i is
// held: the plan's own field, or raw.
func (acc *asmPlan) value(i int) *string {
	p := acc.plan
	switch pipeline.PlanColumns[i] {
	case pipeline.ColAccount:
		return &p.Account
	case pipeline.ColCompanyVAT:
		return &p.Company.VAT
	case pipeline.ColCompanyRegistration:
		return &p.Company.Registration
	case pipeline.ColCompanyIDNumber:
		return &p.Company.IDNumber
	case pipeline.ColPlanName:
		return &p.Name
	case pipeline.ColSector:
		return &p.Sector
	case pipeline.ColScorecardID:
		return &p.ScorecardID
	case pipeline.ColPlanID:
		return &acc.raw[0]
	case pipeline.ColStartDate:
		return &acc.raw[1]
	default: // ColEndDate
		return &acc.raw[2]
	}
}

// planKey returns the key of the record's plan: its plan_id, else its
// account, company, name and start date. It reports false when the key
// has an error (the record then belongs to no plan).
func (a *Assembler) planKey(rec *pipeline.Record, v *asmRowValues) (pipeline.PlanKey, bool) {
	switch {
	case v.planIDBad:
		return pipeline.PlanKey{}, false
	case v.planID != 0:
		return pipeline.PlanKey{PlanID: v.planID}, true
	case v.nameBad:
		return pipeline.PlanKey{}, false
	case v.name == "":
		o := rec.Origin
		if c, ok := rec.Cell(pipeline.ColPlanName); ok {
			o = asmOriginOf(c, *rec, pipeline.ColPlanName)
		}
		a.errorf(o, "", "the row has neither plan_id nor plan_name: give the id of an existing plan, or the name (with start_date and end_date) of a new one")
		return pipeline.PlanKey{}, false
	case v.startBad:
		return pipeline.PlanKey{}, false
	default:
		return pipeline.PlanKey{Account: v.account, Company: v.company, Name: v.name, StartDate: v.start}, true
	}
}

// planFor returns the plan filed under key, starting it at rec when it is
// the first of its rows.
func (a *Assembler) planFor(key pipeline.PlanKey, rec *pipeline.Record) *asmPlan {
	kb := a.planIndexKey(key)
	acc := a.byKey[string(kb)]
	if acc == nil {
		acc = &asmPlan{plan: &pipeline.InputPlan{Origin: asmKeep(rec.Origin)}}
		a.byKey[string(kb)] = acc
		a.plans = append(a.plans, acc)
	}
	return acc
}

// mergePlanFields gives the plan the plan columns the record states,
// reporting a value that disagrees with an earlier row of the plan.
func (a *Assembler) mergePlanFields(acc *asmPlan, rec *pipeline.Record, v *asmRowValues) {
	acc.endBad = acc.endBad || v.endBad
	if acc.plan.CompanyCell.Cell == "" && v.companyAt.Cell != "" {
		acc.plan.CompanyCell = asmKeep(v.companyAt)
	}
	for i, col := range pipeline.PlanColumns {
		if !v.givenSet[i] {
			continue
		}
		val := v.given[i]
		if value, place, set := acc.field(i); set {
			if !asmSameField(col, value, val) {
				c, _ := rec.Cell(col)
				o := asmOriginOf(c, *rec, col)
				a.errorf(o, val, "%s disagrees with an earlier row of the same plan: %q at %s, %q here; every row of a plan must give the same %s", col, pipeline.Excerpt(value), asmRef(place.Origin(), o), pipeline.Excerpt(val), col)
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
func (a *Assembler) setPlanField(acc *asmPlan, rec *pipeline.Record, v *asmRowValues, i int, val string) {
	col := pipeline.PlanColumns[i]
	c, _ := rec.Cell(col)
	pl := a.place(asmOriginOf(c, *rec, col), rec.Origin.Row, "")
	p := acc.plan
	if p.FieldPlaces == nil {
		p.FieldPlaces = new([pipeline.NumPlanColumns]pipeline.FieldPlace)
	}
	*acc.value(i), acc.set = val, acc.set|1<<i
	p.FieldPlaces[i] = pipeline.FieldPlace{At: pl.At, Row: int32(rec.Origin.Row), OnRow: pl.OnRow}
	switch col {
	case pipeline.ColPlanID:
		p.PlanID = v.planID
	case pipeline.ColAccount:
		p.Account = val
		p.AccountOrigin = p.FieldPlaces[i].Origin()
	case pipeline.ColCompanyVAT:
		p.Company.VAT = val
	case pipeline.ColCompanyRegistration:
		p.Company.Registration = val
	case pipeline.ColCompanyIDNumber:
		p.Company.IDNumber = val
	case pipeline.ColPlanName:
		p.Name = val
	case pipeline.ColStartDate:
		p.StartDate = v.start
	case pipeline.ColEndDate:
		p.EndDate = v.end
	case pipeline.ColSector:
		p.Sector = val
	case pipeline.ColScorecardID:
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
func (a *Assembler) planIndexKey(k pipeline.PlanKey) []byte {
	b := binary.AppendVarint(a.keyBuf[:0], k.PlanID)
	b = append(pipeline.AppendNameKey(b, k.Account), 0xff)
	for _, s := range [...]string{k.Company.VAT, k.Company.Registration, k.Company.IDNumber} {
		b = append(pipeline.AppendIdentifierKey(b, s), 0xff)
	}
	b = append(pipeline.AppendNameKey(b, k.Name), 0xff)
	b = binary.AppendVarint(b, int64(k.StartDate.Year))
	b = binary.AppendVarint(b, int64(k.StartDate.Month))
	b = binary.AppendVarint(b, int64(k.StartDate.Day))
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
		p   *pipeline.InputPlan
	}
	plans := make([]named, 0, len(a.plans))
	for _, acc := range a.plans {
		if p := acc.plan; p.Name != "" && !p.StartDate.IsZero() {
			plans = append(plans, named{pipeline.NameKey(p.Name), p})
		}
	}
	same := func(p, q named) int {
		if c := strings.Compare(p.key, q.key); c != 0 {
			return c
		}
		return p.p.StartDate.Compare(q.p.StartDate)
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
func asmCompatible(a, b pipeline.CompanyIDs) bool {
	same := func(x, y string) bool { return x == "" || y == "" || pipeline.SameIdentifier(x, y) }
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
	case pipeline.ColCompanyVAT, pipeline.ColCompanyRegistration, pipeline.ColCompanyIDNumber:
		if k := pipeline.IdentifierKey(value); k != "" {
			return k
		}
	case pipeline.ColAccount:
		return pipeline.NameKey(value)
	}
	return strings.TrimSpace(value)
}

func asmIdentifiers(p *pipeline.InputPlan) string {
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

func (a *Assembler) fieldOrigin(acc *asmPlan, col string) pipeline.Origin {
	if _, place, set := acc.field(asmPlanColumnIndex(col)); set {
		return place.Origin()
	}
	return acc.plan.Origin
}
