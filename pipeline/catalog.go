package pipeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Races, Genders and Levels are the parts of the default counter names
// (docs/formats.md, counter names): number_of_{race}_{gender}_{level}.
var (
	Races   = []string{"african", "coloured", "indian", "white", "foreign"}
	Genders = []string{"male", "female"}
	Levels  = []string{
		"top_managers", "senior_managers", "middle_managers", "junior_managers",
		"semi_skilled_employees", "unskilled_employees",
		"total_permanent_employees", "temporary_employees", "grand_total_employees",
	}
)

// OccupationalLevels are the six levels that partition the permanent
// workforce; the other levels of Levels are summary or temporary slices.
var OccupationalLevels = Levels[:6]

// CounterPrefix starts every counter name (IsCounterName).
const CounterPrefix = "number_of_"

// CounterName returns the counter name for a race, gender and level.
func CounterName(race, gender, level string) string {
	return CounterPrefix + race + "_" + gender + "_" + level
}

// ParseCounterName splits a counter name into race, gender and level.
// ok is false when the name does not have that shape.
func ParseCounterName(name string) (race, gender, level string, ok bool) {
	rest, found := strings.CutPrefix(name, CounterPrefix)
	if !found {
		return "", "", "", false
	}
	race, rest, found = strings.Cut(rest, "_")
	if !found {
		return "", "", "", false
	}
	gender, level, found = strings.Cut(rest, "_")
	if !found || level == "" || race == "" || gender == "" {
		return "", "", "", false
	}
	return race, gender, level, true
}

// Catalog is the set of counter names a target carries. It is data, not
// code: the default is DefaultCatalog, and a catalog can be loaded from a
// file or taken from a target the server returned.
type Catalog struct {
	names []string
	index map[string]int
}

// NewCatalog returns a catalog of the given counter names in that order.
// Every name must start with number_of_; duplicates are an error.
func NewCatalog(names []string) (*Catalog, error) {
	c := &Catalog{index: make(map[string]int, len(names))}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !IsCounterName(n) {
			return nil, fmt.Errorf("catalog: %q is not a counter name (counter names start with %s)", n, CounterPrefix)
		}
		if _, dup := c.index[n]; dup {
			return nil, fmt.Errorf("catalog: counter %q is listed twice", n)
		}
		c.index[n] = len(c.names)
		c.names = append(c.names, n)
	}
	if len(c.names) == 0 {
		return nil, fmt.Errorf("catalog: no counter names")
	}
	return c, nil
}

var defaultCatalog = func() *Catalog {
	var names []string
	for _, level := range Levels {
		for _, race := range Races {
			for _, gender := range Genders {
				names = append(names, CounterName(race, gender, level))
			}
		}
	}
	c, err := NewCatalog(names)
	if err != nil {
		panic(err)
	}
	return c
}()

// DefaultCatalog returns the default catalog (docs/formats.md, counter names): 5 races x
// 2 genders x 9 levels = 90 counters, ordered by level, then race, then gender.
func DefaultCatalog() *Catalog { return defaultCatalog }

// catalogFromCounters returns a catalog of the counter names of a target the
// server returned (the keys of its counters map), in a stable order: names
// the default catalog knows in its order, then the others sorted.
func catalogFromCounters(counters map[string]int64) (*Catalog, error) {
	var known, extra []string
	for n := range counters {
		if IsCounterName(n) {
			if defaultCatalog.Has(n) {
				known = append(known, n)
			} else {
				extra = append(extra, n)
			}
		}
	}
	if len(known) == defaultCatalog.Len() {
		// Every default counter: the catalog the targets read from the
		// service are laid out by (CountersOf), so that their counters
		// and the file's compare index by index.
		return extendedCatalog(defaultCatalog, extra), nil
	}
	sort.Slice(known, func(i, j int) bool { return defaultCatalog.index[known[i]] < defaultCatalog.index[known[j]] })
	sort.Strings(extra)
	return NewCatalog(append(known, extra...))
}

// readCatalog reads a catalog: a JSON array of names, or text with one name a
// line (blank lines and lines starting with # are skipped; a CSV-like line
// keeps its first field).
func readCatalog(r io.Reader) (*Catalog, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(64)
	if strings.HasPrefix(strings.TrimLeft(string(head), " \t\r\n\ufeff"), "[") {
		var names []string
		if err := json.NewDecoder(br).Decode(&names); err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		return NewCatalog(names)
	}
	var names []string
	sc := bufio.NewScanner(br)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line, _, _ = strings.Cut(line, ",")
		line = strings.Trim(strings.TrimSpace(line), `"`)
		if line == "counter" || line == "name" {
			continue
		}
		names = append(names, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return NewCatalog(names)
}

// LoadCatalog reads a catalog file (see readCatalog).
func LoadCatalog(path string) (*Catalog, error) {
	f, err := OpenSmallFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer f.Close()
	c, err := readCatalog(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Names returns the counter names in catalog order. The slice must not be modified.
func (c *Catalog) Names() []string { return c.names }

// Len returns the number of counters.
func (c *Catalog) Len() int { return len(c.names) }

// Equal reports whether c and o hold the same counter names (in any order).
func (c *Catalog) Equal(o *Catalog) bool {
	if len(c.names) != len(o.names) {
		return false
	}
	for _, n := range c.names {
		if !o.Has(n) {
			return false
		}
	}
	return true
}

// Has reports whether name is a counter of the catalog.
func (c *Catalog) Has(name string) bool { _, ok := c.index[name]; return ok }

// indexOf returns the position of name in the catalog, or -1.
func (c *Catalog) IndexOf(name string) int {
	if i, ok := c.index[name]; ok {
		return i
	}
	return -1
}

// Counter returns the catalog's name for race, gender and level, and whether
// the catalog has it.
//
// A name the catalog has is its own string, built without allocating: the
// grid reader asks for each cell of every grid of a workbook (some 300,000
// cells in a 3,000-plan export), which otherwise made as many strings.
func (c *Catalog) Counter(race, gender, level string) (string, bool) {
	var buf [96]byte
	b := append(buf[:0], CounterPrefix...)
	b = append(append(append(append(append(b, race...), '_'), gender...), '_'), level...)
	if i, ok := c.index[string(b)]; ok {
		return c.names[i], true
	}
	return string(b), false
}

// Levels returns the distinct levels of the catalog's names, in first-seen order.
func (c *Catalog) Levels() []string { return c.parts(func(_, _, l string) string { return l }) }

// Races returns the distinct races of the catalog's names, in first-seen order.
func (c *Catalog) Races() []string { return c.parts(func(r, _, _ string) string { return r }) }

// Genders returns the distinct genders of the catalog's names, in first-seen order.
func (c *Catalog) Genders() []string { return c.parts(func(_, g, _ string) string { return g }) }

func (c *Catalog) parts(pick func(race, gender, level string) string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range c.names {
		r, g, l, ok := ParseCounterName(n)
		if !ok {
			continue
		}
		if p := pick(r, g, l); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Suggest returns up to n catalog names closest to name by edit distance,
// closest first, for "did you mean" messages. Names much further away than
// the name's length are not suggested.
func (c *Catalog) Suggest(name string, n int) []string {
	return Closest(name, c.names, n)
}

// Closest returns up to n of candidates closest to s by case-insensitive
// edit distance, closest first (ties in candidate order). Candidates further
// than half of the longer string are left out.
func Closest(s string, candidates []string, n int) []string {
	type scored struct {
		name string
		d, i int
	}
	ls := strings.ToLower(strings.TrimSpace(s))
	var all []scored
	for i, cand := range candidates {
		lc := strings.ToLower(cand)
		d := editDistance(ls, lc)
		limit := max(len(ls), len(lc))/2 + 1
		if d <= limit {
			all = append(all, scored{cand, d, i})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].i < all[j].i
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b (bytes).
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

// IsCounterName reports whether a column or key names a counter: the one
// answer to "is this a counter column?" for every reader, writer and
// report.
func IsCounterName(name string) bool { return strings.HasPrefix(name, CounterPrefix) }

// extendedCatalog returns base followed by the names of extra it lacks,
// sorted; base itself when it lacks none. The same base and names give the
// same *Catalog.
func extendedCatalog(base *Catalog, extra []string) *Catalog {
	var add []string
	for _, n := range extra {
		if !base.Has(n) {
			add = append(add, n)
		}
	}
	if len(add) == 0 {
		return base
	}
	slices.Sort(add)
	add = slices.Compact(add)
	key := strings.Join(add, "\x00")
	extendedMu.Lock()
	defer extendedMu.Unlock()
	byKey := extendedCats[base]
	if c, ok := byKey[key]; ok {
		return c
	}
	names := append(slices.Clip(base.names), add...)
	c := &Catalog{names: names, index: make(map[string]int, len(names))}
	for i, n := range names {
		c.index[n] = i
	}
	if byKey == nil {
		if len(extendedCats) > 64 {
			clear(extendedCats) // a bound: catalogs are few in practice
		}
		byKey = map[string]*Catalog{}
		extendedCats[base] = byKey
	}
	if len(byKey) < 64 {
		byKey[key] = c
	}
	return c
}
