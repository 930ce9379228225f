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
type Counters struct{ D *counterData }

type counterData struct {
	Cat   *Catalog
	Set   []uint64 // presence bits by catalog index
	Small []int32  // values by catalog index while all fit in 32 bits; nil once big is used
	big   []int64  // values by catalog index once one does not fit
	bits  [2]uint64
}

// newCounters returns Counters of cat (nil means the default catalog) with
// every counter blank.
func NewCounters(cat *Catalog) Counters {
	if cat == nil {
		cat = defaultCatalog
	}
	n := len(cat.names)
	d := &counterData{Cat: cat, Small: make([]int32, n)}
	if w := (n + 63) / 64; w <= len(d.bits) {
		d.Set = d.bits[:w] // (setBits without a slice to copy)
	} else {
		d.Set = make([]uint64, w)
	}
	return Counters{d}
}

// setBits makes d's presence bits a copy of bits, inside d when they fit.
func (d *counterData) setBits(bits []uint64) {
	if len(bits) <= len(d.bits) {
		d.bits = [2]uint64{}
		d.Set = d.bits[:len(bits)]
		copy(d.Set, bits)
		return
	}
	d.Set = slices.Clone(bits)
}

// value returns the value at i, set or not.
func (d *counterData) value(i int) int64 {
	if d.Small != nil {
		return int64(d.Small[i])
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
	c := NewCounters(extendedCatalog(defaultCatalog, extra))
	for name, v := range m {
		c.Set(c.D.Cat.index[name], v)
	}
	return c
}

// countersIn returns the counters of m in cat's layout, and the names of m
// that cat does not have (sorted), which are left out.
func CountersIn(cat *Catalog, m map[string]int64) (Counters, []string) {
	c := NewCounters(cat)
	var unknown []string
	for name, v := range m {
		if i := c.D.Cat.IndexOf(name); i >= 0 {
			c.Set(i, v)
		} else {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return c, unknown
}

// catalog returns the catalog the counters are laid out by; nil for the
// zero Counters.
func (c Counters) Catalog() *Catalog {
	if c.D == nil {
		return nil
	}
	return c.D.Cat
}

// Len returns the number of slots (the catalog's length), blank or not.
func (c Counters) Len() int {
	if c.D == nil {
		return 0
	}
	return len(c.D.Cat.names)
}

// Count returns the number of counters set.
func (c Counters) Count() int {
	if c.D == nil {
		return 0
	}
	n := 0
	for _, w := range c.D.Set {
		n += bits.OnesCount64(w)
	}
	return n
}

// isEmpty reports whether every counter is blank.
func (c Counters) IsEmpty() bool {
	if c.D == nil {
		return true
	}
	for _, w := range c.D.Set {
		if w != 0 {
			return false
		}
	}
	return true
}

// isBlank reports whether the counter at catalog index i is blank.
func (c Counters) isBlank(i int) bool { return c.D.Set[i>>6]&(1<<(uint(i)&63)) == 0 }

// get returns the value at catalog index i and whether it is set.
func (c Counters) Get(i int) (int64, bool) {
	if c.isBlank(i) {
		return 0, false
	}
	return c.D.value(i), true
}

// set sets the counter at catalog index i to v.
func (c Counters) Set(i int, v int64) {
	d := c.D
	switch {
	case d.Small == nil:
		d.big[i] = v
	case v == int64(int32(v)):
		d.Small[i] = int32(v)
	default:
		d.big = make([]int64, len(d.Small))
		for j, x := range d.Small {
			d.big[j] = int64(x)
		}
		d.Small = nil
		d.big[i] = v
	}
	d.Set[i>>6] |= 1 << (uint(i) & 63)
}

// clear makes the counter at catalog index i blank.
func (c Counters) Clear(i int) {
	d := c.D
	if d.Small != nil {
		d.Small[i] = 0
	} else {
		d.big[i] = 0
	}
	d.Set[i>>6] &^= 1 << (uint(i) & 63)
}

// ByName returns the value of the counter name and whether it is set
// (false when the catalog lacks name).
func (c Counters) ByName(name string) (int64, bool) {
	if c.D == nil {
		return 0, false
	}
	i, ok := c.D.Cat.index[name]
	if !ok {
		return 0, false
	}
	return c.Get(i)
}

// Put sets the counter name to v. A name the catalog lacks is not
// dropped: the counters are laid out again by their catalog followed by
// the name, seen through every copy (the zero Counters starts from the
// default catalog, in c only).
func (c *Counters) Put(name string, v int64) {
	if c.D == nil {
		*c = NewCounters(nil)
	}
	i, ok := c.D.Cat.index[name]
	if !ok {
		nd := c.relayout(extendedCatalog(c.D.Cat, []string{name})).D
		c.D.Cat, c.D.Small, c.D.big = nd.Cat, nd.Small, nd.big
		c.D.setBits(nd.Set)
		i = c.D.Cat.index[name]
	}
	c.Set(i, v)
}

// Remove makes the counter name blank (nothing when the catalog lacks it).
func (c Counters) Remove(name string) {
	if c.D == nil {
		return
	}
	if i, ok := c.D.Cat.index[name]; ok {
		c.Clear(i)
	}
}

// each calls f with the index, name and value of every counter set, in
// catalog order.
func (c Counters) Each(f func(i int, name string, v int64)) {
	if c.D == nil {
		return
	}
	d := c.D
	for w, word := range d.Set {
		for word != 0 {
			i := w<<6 + bits.TrailingZeros64(word)
			word &= word - 1
			f(i, d.Cat.names[i], d.value(i))
		}
	}
}

// All iterates over the name and value of every counter set, in catalog
// order.
func (c Counters) All() iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		if c.D == nil {
			return
		}
		d := c.D
		for w, word := range d.Set {
			for word != 0 {
				i := w<<6 + bits.TrailingZeros64(word)
				word &= word - 1
				if !yield(d.Cat.names[i], d.value(i)) {
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
func (c Counters) Clone() Counters {
	if c.D == nil {
		return Counters{}
	}
	d := &counterData{Cat: c.D.Cat, Small: slices.Clone(c.D.Small), big: slices.Clone(c.D.big)}
	d.setBits(c.D.Set)
	return Counters{d}
}

// fillBlanks returns a copy of c where every counter blank in c takes its
// value in from (when set there). The copy's catalog is c's, extended by
// from's counters it lacks, so nothing of either is lost.
func (c Counters) FillBlanks(from Counters) Counters {
	cat := c.Catalog()
	if cat == nil {
		cat = from.Catalog()
	}
	if cat == nil {
		return Counters{}
	}
	var extra []string
	if !sameLayout(cat, from.Catalog()) {
		from.Each(func(_ int, name string, _ int64) {
			if !cat.Has(name) {
				extra = append(extra, name)
			}
		})
	}
	out := c.relayout(extendedCatalog(cat, extra))
	from.Each(func(_ int, name string, v int64) {
		if i := out.D.Cat.index[name]; out.isBlank(i) {
			out.Set(i, v)
		}
	})
	return out
}

// counterDelta is one counter set in a target that another target holds
// at a different value, or does not hold (OldKnown false).
type CounterDelta struct {
	index    int // in the new counters' catalog
	Name     string
	New      int64
	Old      int64
	OldKnown bool
}

// diffCounters compares the counters set in next with old, in next's
// catalog order: same counts those equal in both; each other counter set
// in next is passed to f (blank counters of next are never compared).
func DiffCounters(next, old Counters, f func(CounterDelta)) (same int) {
	if next.D == nil {
		return 0
	}
	nd := next.D
	fast := old.D != nil && sameLayout(nd.Cat, old.D.Cat)
	for w, word := range nd.Set {
		for word != 0 {
			i := w<<6 + bits.TrailingZeros64(word)
			word &= word - 1
			v := nd.value(i)
			var o int64
			var known bool
			if fast {
				o, known = old.Get(i)
			} else {
				o, known = old.ByName(nd.Cat.names[i])
			}
			if known && o == v {
				same++
				continue
			}
			f(CounterDelta{index: i, Name: nd.Cat.names[i], New: v, Old: o, OldKnown: known})
		}
	}
	return same
}

// MarshalJSON writes the counters set as a JSON object, name to value,
// with the names sorted (as encoding/json writes a map).
func (c Counters) MarshalJSON() ([]byte, error) {
	if c.D == nil {
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
	if c.Catalog() == cat && cat != nil {
		return c.Clone()
	}
	out := NewCounters(cat)
	c.Each(func(_ int, name string, v int64) { out.Set(out.D.Cat.index[name], v) })
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
