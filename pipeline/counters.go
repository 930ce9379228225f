package pipeline

import (
	"encoding/json"
	"iter"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Counters are the counter values of one target, dense: one slot per
// counter of a Catalog, in catalog order, each either blank or set to a
// value. Blank is not 0: in an input target a blank counter means "leave
// the server's value alone", and in a stored target a counter the service
// did not send.
//
// Values are held as 32-bit integers while every value fits (head counts
// do), and as 64-bit ones from the first that does not: a target of 90
// counters takes about 0.5 KB instead of the 3.6 KB of a 90-entry map, and
// two targets of one catalog compare in a loop over two arrays.
//
// Counters is a reference, like a map: copies share their values, and a
// change through one (Set, Put, Remove) is seen through all. Use Clone for
// an independent copy. The zero Counters has no catalog and every counter
// blank; Put gives it the default catalog. Counters are not safe for
// concurrent writes.
type Counters struct{ d *counterData }

type counterData struct {
	cat   *Catalog
	set   []uint64 // presence bits by catalog index
	small []int32  // values by catalog index while all fit in 32 bits; nil once big is used
	big   []int64  // values by catalog index once one does not fit
	bits  [2]uint64
}

// newCounters returns Counters of cat (nil means the default catalog) with
// every counter blank.
func newCounters(cat *Catalog) Counters {
	if cat == nil {
		cat = defaultCatalog
	}
	n := len(cat.names)
	d := &counterData{cat: cat, small: make([]int32, n)}
	if w := (n + 63) / 64; w <= len(d.bits) {
		d.set = d.bits[:w] // (setBits without a slice to copy)
	} else {
		d.set = make([]uint64, w)
	}
	return Counters{d}
}

// setBits makes d's presence bits a copy of bits, inside d when they fit.
func (d *counterData) setBits(bits []uint64) {
	if len(bits) <= len(d.bits) {
		d.bits = [2]uint64{}
		d.set = d.bits[:len(bits)]
		copy(d.set, bits)
		return
	}
	d.set = slices.Clone(bits)
}

// value returns the value at i, set or not.
func (d *counterData) value(i int) int64 {
	if d.small != nil {
		return int64(d.small[i])
	}
	return d.big[i]
}

// CountersOf returns the counters of m (name to value; every name is set).
// Their catalog is the default one when it holds every name of m, else
// the default catalog followed by m's other names sorted (see
// catalogFromCounters), so that no counter is lost. Names that are not
// counter names (without the number_of_ prefix) are kept as well. A nil
// map gives the zero Counters (no catalog), as a nil map stood for a
// target that is not there.
func CountersOf(m map[string]int64) Counters {
	if m == nil {
		return Counters{}
	}
	var extra []string
	for name := range m {
		if !defaultCatalog.Has(name) {
			extra = append(extra, name)
		}
	}
	c := newCounters(extendedCatalog(defaultCatalog, extra))
	for name, v := range m {
		c.set(c.d.cat.index[name], v)
	}
	return c
}

// countersIn returns the counters of m in cat's layout, and the names of m
// that cat does not have (sorted), which are left out.
func countersIn(cat *Catalog, m map[string]int64) (Counters, []string) {
	c := newCounters(cat)
	var unknown []string
	for name, v := range m {
		if i := c.d.cat.indexOf(name); i >= 0 {
			c.set(i, v)
		} else {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return c, unknown
}

// catalog returns the catalog the counters are laid out by; nil for the
// zero Counters.
func (c Counters) catalog() *Catalog {
	if c.d == nil {
		return nil
	}
	return c.d.cat
}

// Len returns the number of slots (the catalog's length), blank or not.
func (c Counters) Len() int {
	if c.d == nil {
		return 0
	}
	return len(c.d.cat.names)
}

// Count returns the number of counters set.
func (c Counters) Count() int {
	if c.d == nil {
		return 0
	}
	n := 0
	for _, w := range c.d.set {
		n += bits.OnesCount64(w)
	}
	return n
}

// isEmpty reports whether every counter is blank.
func (c Counters) isEmpty() bool {
	if c.d == nil {
		return true
	}
	for _, w := range c.d.set {
		if w != 0 {
			return false
		}
	}
	return true
}

// isBlank reports whether the counter at catalog index i is blank.
func (c Counters) isBlank(i int) bool { return c.d.set[i>>6]&(1<<(uint(i)&63)) == 0 }

// get returns the value at catalog index i and whether it is set.
func (c Counters) get(i int) (int64, bool) {
	if c.isBlank(i) {
		return 0, false
	}
	return c.d.value(i), true
}

// set sets the counter at catalog index i to v.
func (c Counters) set(i int, v int64) {
	d := c.d
	switch {
	case d.small == nil:
		d.big[i] = v
	case v == int64(int32(v)):
		d.small[i] = int32(v)
	default:
		d.big = make([]int64, len(d.small))
		for j, x := range d.small {
			d.big[j] = int64(x)
		}
		d.small = nil
		d.big[i] = v
	}
	d.set[i>>6] |= 1 << (uint(i) & 63)
}

// clear makes the counter at catalog index i blank.
func (c Counters) clear(i int) {
	d := c.d
	if d.small != nil {
		d.small[i] = 0
	} else {
		d.big[i] = 0
	}
	d.set[i>>6] &^= 1 << (uint(i) & 63)
}

// ByName returns the value of the counter name and whether it is set
// (false when the catalog lacks name).
func (c Counters) ByName(name string) (int64, bool) {
	if c.d == nil {
		return 0, false
	}
	i, ok := c.d.cat.index[name]
	if !ok {
		return 0, false
	}
	return c.get(i)
}

// Put sets the counter name to v. A name the catalog lacks is not
// dropped: the counters are laid out again by their catalog followed by
// the name, seen through every copy (the zero Counters starts from the
// default catalog, in c only).
func (c *Counters) Put(name string, v int64) {
	if c.d == nil {
		*c = newCounters(nil)
	}
	i, ok := c.d.cat.index[name]
	if !ok {
		nd := c.relayout(extendedCatalog(c.d.cat, []string{name})).d
		c.d.cat, c.d.small, c.d.big = nd.cat, nd.small, nd.big
		c.d.setBits(nd.set)
		i = c.d.cat.index[name]
	}
	c.set(i, v)
}

// Remove makes the counter name blank (nothing when the catalog lacks it).
func (c Counters) Remove(name string) {
	if c.d == nil {
		return
	}
	if i, ok := c.d.cat.index[name]; ok {
		c.clear(i)
	}
}

// each calls f with the index, name and value of every counter set, in
// catalog order.
func (c Counters) each(f func(i int, name string, v int64)) {
	if c.d == nil {
		return
	}
	d := c.d
	for w, word := range d.set {
		for word != 0 {
			i := w<<6 + bits.TrailingZeros64(word)
			word &= word - 1
			f(i, d.cat.names[i], d.value(i))
		}
	}
}

// All iterates over the name and value of every counter set, in catalog
// order.
func (c Counters) All() iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		if c.d == nil {
			return
		}
		d := c.d
		for w, word := range d.set {
			for word != 0 {
				i := w<<6 + bits.TrailingZeros64(word)
				word &= word - 1
				if !yield(d.cat.names[i], d.value(i)) {
					return
				}
			}
		}
	}
}

// names returns the names of the counters set, in catalog order.
func (c Counters) names() []string {
	out := make([]string, 0, c.Count())
	for name := range c.All() {
		out = append(out, name)
	}
	return out
}

// Map returns the counters set as a map (nil when none is set).
func (c Counters) Map() map[string]int64 {
	n := c.Count()
	if n == 0 {
		return nil
	}
	m := make(map[string]int64, n)
	for name, v := range c.All() {
		m[name] = v
	}
	return m
}

// clone returns an independent copy.
func (c Counters) clone() Counters {
	if c.d == nil {
		return Counters{}
	}
	d := &counterData{cat: c.d.cat, small: slices.Clone(c.d.small), big: slices.Clone(c.d.big)}
	d.setBits(c.d.set)
	return Counters{d}
}

// fillBlanks returns a copy of c where every counter blank in c takes its
// value in from (when set there). The copy's catalog is c's, extended by
// from's counters it lacks, so nothing of either is lost.
func (c Counters) fillBlanks(from Counters) Counters {
	cat := c.catalog()
	if cat == nil {
		cat = from.catalog()
	}
	if cat == nil {
		return Counters{}
	}
	var extra []string
	if !sameLayout(cat, from.catalog()) {
		from.each(func(_ int, name string, _ int64) {
			if !cat.Has(name) {
				extra = append(extra, name)
			}
		})
	}
	out := c.relayout(extendedCatalog(cat, extra))
	from.each(func(_ int, name string, v int64) {
		if i := out.d.cat.index[name]; out.isBlank(i) {
			out.set(i, v)
		}
	})
	return out
}

// counterDelta is one counter set in a target that another target holds
// at a different value, or does not hold (OldKnown false).
type counterDelta struct {
	index    int // in the new counters' catalog
	name     string
	new      int64
	old      int64
	oldKnown bool
}

// diffCounters compares the counters set in next with old, in next's
// catalog order: same counts those equal in both; each other counter set
// in next is passed to f (blank counters of next are never compared).
func diffCounters(next, old Counters, f func(counterDelta)) (same int) {
	if next.d == nil {
		return 0
	}
	nd := next.d
	fast := old.d != nil && sameLayout(nd.cat, old.d.cat)
	for w, word := range nd.set {
		for word != 0 {
			i := w<<6 + bits.TrailingZeros64(word)
			word &= word - 1
			v := nd.value(i)
			var o int64
			var known bool
			if fast {
				o, known = old.get(i)
			} else {
				o, known = old.ByName(nd.cat.names[i])
			}
			if known && o == v {
				same++
				continue
			}
			f(counterDelta{index: i, name: nd.cat.names[i], new: v, old: o, oldKnown: known})
		}
	}
	return same
}

// MarshalJSON writes the counters set as a JSON object, name to value,
// with the names sorted (as encoding/json writes a map).
func (c Counters) MarshalJSON() ([]byte, error) {
	if c.d == nil {
		return []byte("null"), nil
	}
	var b strings.Builder
	b.WriteByte('{')
	names := c.names()
	slices.Sort(names)
	for k, name := range names {
		if k > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(name)
		b.Write(q)
		b.WriteByte(':')
		v, _ := c.ByName(name)
		b.WriteString(strconv.FormatInt(v, 10))
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// UnmarshalJSON reads a JSON object of name to value (see CountersOf).
func (c *Counters) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*c = Counters{}
		return nil
	}
	*c = CountersOf(m)
	return nil
}

// relayout returns a copy of c's counters in cat's layout; cat must hold
// every counter set in c.
func (c Counters) relayout(cat *Catalog) Counters {
	if c.catalog() == cat && cat != nil {
		return c.clone()
	}
	out := newCounters(cat)
	c.each(func(_ int, name string, v int64) { out.set(out.d.cat.index[name], v) })
	return out
}

// sameLayout reports whether two catalogs hold the same names in the same
// order, so that their indexes agree.
func sameLayout(a, b *Catalog) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return slices.Equal(a.names, b.names)
}

// extended catalogs are kept, so that the targets of one service share
// one catalog (and compare in the fast path).
var (
	extendedMu   sync.Mutex
	extendedCats = map[*Catalog]map[string]*Catalog{}
)

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
