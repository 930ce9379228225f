package pipeline

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// counterMap draws a map of counter names (mostly the default catalog's,
// sometimes others a service may carry) to values.
func counterMap(t *rapid.T, label string) map[string]int64 {
	names := append(slices.Clone(DefaultCatalog().Names()), "number_of_martian_male_top_managers", "number_of_african_other_top_managers", "number_of_x")
	m := map[string]int64{}
	for range rapid.IntRange(0, 40).Draw(t, label+"-n") {
		m[rapid.SampledFrom(names).Draw(t, label+"-name")] = rapid.Int64Range(-2, 1<<40).Draw(t, label+"-value")
	}
	return m
}

// drawCatalog draws a catalog: the default one, or a shuffled subset of
// it with a foreign counter, as a --catalog file or a service may give.
func drawCatalog(t *rapid.T, label string) *Catalog {
	if rapid.Bool().Draw(t, label+"-default") {
		return DefaultCatalog()
	}
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(DefaultCatalog().Names()), 1, 90, rapid.ID[string]).Draw(t, label+"-names")
	if rapid.Bool().Draw(t, label+"-foreign") {
		names = append(names, "number_of_martian_male_top_managers")
	}
	c, err := NewCatalog(names)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCountersMapRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := counterMap(t, "m")
		c := CountersOf(m)
		if got := c.Map(); !maps.Equal(got, m) {
			t.Fatalf("CountersOf(%v).Map() = %v", m, got)
		}
		if c.Count() != len(m) || c.IsEmpty() != (len(m) == 0) {
			t.Fatalf("Count %d IsEmpty %v for %d counters", c.Count(), c.IsEmpty(), len(m))
		}
		for name, v := range m {
			if got, ok := c.ByName(name); !ok || got != v {
				t.Fatalf("ByName(%s) = %d, %v; want %d", name, got, ok, v)
			}
		}
		if _, ok := c.ByName("number_of_nobody_male_top_managers"); ok {
			t.Fatal("a name in no map is set")
		}
		// In another catalog: what it has is kept, the rest reported.
		cat := drawCatalog(t, "cat")
		in, unknown := CountersIn(cat, m)
		back := in.Map()
		for name, v := range m {
			got, kept := back[name]
			if cat.Has(name) != kept || (kept && got != v) {
				t.Fatalf("%s: in catalog %v, kept %v (%d, want %d)", name, cat.Has(name), kept, got, v)
			}
			if !cat.Has(name) && !slices.Contains(unknown, name) {
				t.Fatalf("%s left out but not reported", name)
			}
		}
		// Put and Remove behave as map assignment and delete, also for
		// names the catalog lacks.
		var p Counters
		want := map[string]int64{}
		for name, v := range m {
			p.Put(name, v)
			want[name] = v
		}
		for name := range m {
			if rapid.Bool().Draw(t, "remove") {
				p.Remove(name)
				delete(want, name)
			}
		}
		if got := p.Map(); !maps.Equal(got, want) {
			t.Fatalf("after Put/Remove: %v, want %v", got, want)
		}
		// A clone is equal and independent; a copy shares.
		if p.Catalog() == nil {
			p = NewCounters(nil) // a copy of the zero Counters shares nothing yet
		}
		cl, cp := p.Clone(), p
		if !maps.Equal(cl.Map(), want) || !maps.Equal(cl.Map(), p.Map()) {
			t.Fatalf("clone %v, want %v", cl.Map(), want)
		}
		cp.Put("number_of_african_male_top_managers", 1<<40)
		cp.Put("number_of_venus_female_top_managers", 7)
		if v, _ := p.ByName("number_of_venus_female_top_managers"); v != 7 {
			t.Fatal("a copy's Put is not seen through the original")
		}
		if !maps.Equal(cl.Map(), want) {
			t.Fatalf("the clone changed with the original: %v", cl.Map())
		}
		// JSON writes what a map writes.
		j1, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		j2, _ := json.Marshal(m)
		if string(j1) != string(j2) {
			t.Fatalf("JSON %s, a map gives %s", j1, j2)
		}
		var r Counters
		if err := json.Unmarshal(j1, &r); err != nil || !maps.Equal(r.Map(), c.Map()) {
			t.Fatalf("JSON round trip: %v %v", r.Map(), err)
		}
	})
}

// mapDelta is a counterDelta as the map-based diff computed it.
type mapDelta struct {
	Name     string
	New, Old int64
	OldKnown bool
}

// diffMaps is the reference: every counter next sets, compared with old.
func diffMaps(next, old map[string]int64, order []string) (same int, out []mapDelta) {
	for _, name := range order {
		v, set := next[name]
		if !set {
			continue
		}
		o, known := old[name]
		if known && o == v {
			same++
			continue
		}
		out = append(out, mapDelta{name, v, o, known})
	}
	return same, out
}

func TestDiffCountersMatchesMaps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cat := drawCatalog(t, "next")
		nextMap := counterMap(t, "next")
		next, _ := CountersIn(cat, nextMap)
		nextMap = next.Map() // what the catalog kept
		oldMap := counterMap(t, "old")
		if rapid.Bool().Draw(t, "old-like-next") {
			// Mostly equal values, as a re-run sees.
			for n, v := range nextMap {
				if rapid.IntRange(0, 3).Draw(t, "keep") > 0 {
					oldMap[n] = v
				}
			}
		}
		var old Counters
		switch rapid.IntRange(0, 2).Draw(t, "old-layout") {
		case 0:
			old = CountersOf(oldMap) // as planapi lays out a stored target
		case 1:
			old, _ = CountersIn(cat, oldMap) // the same layout: the fast path
			oldMap = old.Map()
		default:
			old, _ = CountersIn(drawCatalog(t, "old"), oldMap)
			oldMap = old.Map()
		}
		wantSame, want := diffMaps(nextMap, oldMap, cat.Names())
		var got []mapDelta
		same := DiffCounters(next, old, func(d CounterDelta) {
			if next.D.Cat.names[d.index] != d.Name {
				t.Fatalf("index %d is %s, delta names %s", d.index, next.D.Cat.names[d.index], d.Name)
			}
			got = append(got, mapDelta{d.Name, d.New, d.Old, d.OldKnown})
		})
		if same != wantSame || !slices.Equal(got, want) {
			t.Fatalf("dense diff: same %d %v\nmap diff: same %d %v", same, got, wantSame, want)
		}
		// FillBlanks is a map merge where next wins.
		merged := maps.Clone(oldMap)
		if merged == nil {
			merged = map[string]int64{}
		}
		maps.Copy(merged, nextMap)
		if got := next.FillBlanks(old).Map(); !maps.Equal(got, merged) && len(merged)+len(got) > 0 {
			t.Fatalf("FillBlanks: %v, want %v", got, merged)
		}
		if !maps.Equal(next.Map(), nextMap) {
			t.Fatal("FillBlanks changed its receiver")
		}
	})
}

func TestCountersBlankIsNotZero(t *testing.T) {
	c := NewCounters(nil)
	i := DefaultCatalog().IndexOf("number_of_african_male_top_managers")
	if _, ok := c.Get(i); ok || !c.isBlank(i) {
		t.Fatal("a new counter is set")
	}
	c.Set(i, 0)
	if v, ok := c.Get(i); !ok || v != 0 || c.isBlank(i) {
		t.Fatalf("a counter set to 0 reads %d, %v", v, ok)
	}
	c.Clear(i)
	if !c.isBlank(i) || c.Count() != 0 {
		t.Fatal("Clear left the counter set")
	}
	var zero Counters
	if zero.Count() != 0 || !zero.IsEmpty() || zero.Map() != nil {
		t.Fatal("the zero Counters is not empty")
	}
	if _, ok := zero.ByName("number_of_african_male_top_managers"); ok {
		t.Fatal("the zero Counters has a value")
	}
	// A service's own counter survives, in an extended catalog shared by
	// every target that carries it.
	a := CountersOf(map[string]int64{"number_of_martian_male_top_managers": 4, "number_of_african_male_top_managers": 1})
	b := CountersOf(map[string]int64{"number_of_martian_male_top_managers": 5})
	if a.Catalog() != b.Catalog() || a.Catalog().Len() != DefaultCatalog().Len()+1 {
		t.Fatalf("catalogs %p %p of %d counters", a.Catalog(), b.Catalog(), a.Catalog().Len())
	}
	if v, ok := a.ByName("number_of_martian_male_top_managers"); !ok || v != 4 {
		t.Fatal("the service's own counter was lost")
	}
}

// FuzzCountersJSON: whatever JSON object of counters decodes, the dense
// form holds exactly the map's entries and writes them back the same way.
func FuzzCountersJSON(f *testing.F) {
	f.Add([]byte(`{"number_of_african_male_top_managers":3,"number_of_x":-1}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"number_of_white_female_top_managers":9007199254740993}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]int64
		mErr := json.Unmarshal(b, &m)
		var c Counters
		cErr := json.Unmarshal(b, &c)
		if (mErr == nil) != (cErr == nil) {
			t.Fatalf("map decoding: %v, Counters decoding: %v", mErr, cErr)
		}
		if mErr != nil {
			return
		}
		if !maps.Equal(c.Map(), m) && len(m)+c.Count() > 0 {
			t.Fatalf("decoded %v, the map holds %v", c.Map(), m)
		}
		j1, _ := json.Marshal(c)
		j2, _ := json.Marshal(m)
		if string(j1) != string(j2) {
			t.Fatalf("Counters write %s, the map %s", j1, j2)
		}
	})
}
