package sandbox

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"
)

// This file is the sandbox's own statement of the service contract, written
// from the service's API contract and the decisions docs/sandbox.md states,
// and deliberately not taken from the pipeline: a
// mistake in the pipeline's rules must meet a second, independent reading
// here, where a test (contract_test.go, TestSandboxContractMatchesPipeline)
// compares the two.

// Target types (seed 2.3): every milestone holds one of each, all_employees
// first.
const (
	targetAll      = "all_employees"
	targetDisabled = "disabled_employees"
)

var targetTypes = []string{targetAll, targetDisabled}

// eraPost2025 is the era of every plan created through the API (seed 2.1).
const eraPost2025 = "post_2025"

// sectors are the seed's sector values (2.1), case-sensitive exact strings.
var sectors = []string{
	"Accommodation and Food Service Activities",
	"Administrative and Support Activities",
	"Agriculture, Forestry & Fishing",
	"Arts, Entertainment and Recreation",
	"Construction",
	"Education",
	"Electricity, Gas Steam and Air Conditioning Supply",
	"Financial and Insurance Activities",
	"Human Health and Social Work",
	"Information and Communication",
	"Manufacturing",
	"Mining and Quarrying",
	"Professional Scientific and Technical",
	"Public Administration and Defence; Compulsory Social Security",
	"Real Estate Activities",
	"Transport and Storage",
	"Water Supply, Sewerage, Waste Management and Remediation Activities",
	"Wholesale and Retail Trade; Repair of Motor Vehicles and Motorcycles",
}

// charterSuffixes are the seed's charter ids (2.4) without their fixed
// "alpha_" prefix.
var charterSuffixes = []string{
	"generic", "agri", "forestry", "transport_public_sector",
	"construction_built_environment_professionals", "construction_contractors",
	"specialised", "tourism", "specialised_ict", "ict", "mac",
	"transport_road_freight", "transport_bus_commuter", "transport_coach_services",
	"financial_long_term", "financial_short_term", "financial_other",
	"financial_specialised", "financial_stock_exchanges", "financial_banking",
	"property_internal_management", "property_owners", "defence", "legal_attorneys",
}

// charterPrefix begins every charter id (seed 2.4).
const charterPrefix = "alpha_"

var charters = func() []string {
	out := make([]string, len(charterSuffixes))
	for i, s := range charterSuffixes {
		out[i] = charterPrefix + s
	}
	return out
}()

// provinces are the province values of docs/sandbox.md, "Behaviour" (the seed does not
// show them; A4 shows "National").
var provinces = []string{
	"National", "Eastern Cape", "Free State", "Gauteng", "KwaZulu-Natal",
	"Limpopo", "Mpumalanga", "North West", "Northern Cape", "Western Cape",
}

// The counter catalog the sandbox serves (docs/sandbox.md, "Behaviour"): the counter
// number_of_{race}_{gender}_{level} for every race, gender and level below,
// 5 x 2 x 9 = 90 counters.
var (
	counterRaces   = []string{"african", "coloured", "indian", "white", "foreign"}
	counterGenders = []string{"male", "female"}
	counterLevels  = []string{
		"top_managers", "senior_managers", "middle_managers", "junior_managers",
		"semi_skilled_employees", "unskilled_employees",
		"total_permanent_employees", "temporary_employees", "grand_total_employees",
	}
)

// counterPrefix begins every counter name (seed 2.3).
const counterPrefix = "number_of_"

// catalog is the served counter set in wire order: sorted by name, the
// order in which the counters appear in a target's JSON object.
type catalog struct {
	names []string
	index map[string]int
	keys  [][]byte // `"name":` per counter, ready to append
}

var served = func() *catalog {
	var names []string
	for _, r := range counterRaces {
		for _, g := range counterGenders {
			for _, l := range counterLevels {
				names = append(names, counterPrefix+r+"_"+g+"_"+l)
			}
		}
	}
	sort.Strings(names)
	c := &catalog{names: names, index: make(map[string]int, len(names))}
	for i, n := range names {
		c.index[n] = i
		c.keys = append(c.keys, []byte(`"`+n+`":`))
	}
	return c
}()

// lookup returns the index of a counter name, or -1.
func (c *catalog) lookup(name string) int {
	if i, ok := c.index[name]; ok {
		return i
	}
	return -1
}

// suggest returns the served counter name closest to name (case-insensitive
// edit distance, at most half the longer name), or "".
func (c *catalog) suggest(name string) string {
	ln := strings.ToLower(strings.TrimSpace(name))
	best, bestD := "", -1
	for _, cand := range c.names {
		d := editDistance(ln, cand)
		if d > max(len(ln), len(cand))/2+1 {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = cand, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// civilDate is a calendar date. The zero value means "none".
type civilDate struct {
	y int
	m time.Month
	d int
}

// Limits of the seed (section 8): the earliest start of a plan, and the end
// date post_2025 plans are clamped to.
var (
	earliestStart = civilDate{2025, time.September, 1}
	latestEnd     = civilDate{2030, time.August, 31}
)

// parseCivilDate reads a date in the one form the seed uses, YYYY-MM-DD:
// exactly ten characters, a four-digit year, a two-digit month 01-12 and a
// two-digit day that exists in that month (Gregorian leap years).
func parseCivilDate(s string) (civilDate, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return civilDate{}, false
	}
	num := func(p string) (int, bool) {
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return 0, false
			}
			n = n*10 + int(p[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
		return civilDate{}, false
	}
	return civilDate{y, time.Month(m), d}, true
}

func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

func (d civilDate) isZero() bool { return d == civilDate{} }

func (d civilDate) String() string {
	if d.isZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.y, int(d.m), d.d)
}

func (d civilDate) compare(e civilDate) int {
	switch {
	case d.y != e.y:
		return cmp.Compare(d.y, e.y)
	case d.m != e.m:
		return cmp.Compare(int(d.m), int(e.m))
	}
	return cmp.Compare(d.d, e.d)
}

func (d civilDate) before(e civilDate) bool { return d.compare(e) < 0 }
func (d civilDate) after(e civilDate) bool  { return d.compare(e) > 0 }

// financialYear returns the year in which the financial year holding d
// starts: financial years run from 1 September to 31 August (seed 1).
func financialYear(d civilDate) int {
	if d.m >= time.September {
		return d.y
	}
	return d.y - 1
}

// clampEnd clamps the end of a post_2025 plan to latestEnd (seed 2.1, 8).
func clampEnd(end civilDate) civilDate {
	if end.after(latestEnd) {
		return latestEnd
	}
	return end
}

// period is one milestone's financial year.
type period struct {
	yearNumber int
	start, end civilDate
}

// milestonePeriods returns one whole financial year per financial year the
// dates overlap, numbered from 1 (docs/sandbox.md, "Behaviour": milestone dates).
func milestonePeriods(start, end civilDate) []period {
	var out []period
	for y := financialYear(start); y <= financialYear(end); y++ {
		out = append(out, period{len(out) + 1, civilDate{y, time.September, 1}, civilDate{y + 1, time.August, 31}})
	}
	return out
}

// createDates applies the create rules to start_date and end_date, given
// as parsed (zero when absent or malformed; their own messages are then
// already reported): start on or after earliestStart (seed 7) and, as a
// sandbox decision, on or before latestEnd (a later start would leave the
// clamped end before the start); end not before start (docs/sandbox.md, "Behaviour").
// It returns the end as stored (clamped) and the 422 messages.
func createDates(start, end civilDate) (clamped civilDate, problems []string) {
	if !start.isZero() {
		if start.before(earliestStart) {
			problems = append(problems, fmt.Sprintf("start_date %s must be on or after %s", start, earliestStart))
		} else if start.after(latestEnd) {
			problems = append(problems, fmt.Sprintf("start_date %s must be on or before %s, the latest end date of a post_2025 plan", start, latestEnd))
		}
	}
	if !end.isZero() && !start.isZero() && end.before(start) {
		problems = append(problems, fmt.Sprintf("end_date %s must not be before start_date %s", end, start))
	}
	return clampEnd(end), problems
}

// The key rules (contract-notes A5, docs/sandbox.md, "API keys"): an
// account holds at most maxActiveKeys keys that are neither revoked nor
// expired, and a create's optional expires_in is one of keyLifetimes
// (omitted: the key never expires).
const maxActiveKeys = 5

var keyLifetimes = map[string]int{"30d": 30, "90d": 90, "180d": 180, "365d": 365}

// keyLifetimeNames are the expires_in values in increasing order.
var keyLifetimeNames = []string{"30d", "90d", "180d", "365d"}
