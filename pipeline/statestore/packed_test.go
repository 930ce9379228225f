package statestore

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

// TestPackedWriteCountersRoundTrip: a write's counters read back as they
// were packed, in their order, the short form of a counter in sync
// included.
func TestPackedWriteCountersRoundTrip(t *testing.T) {
	cs := []pipeline.CounterWrite{
		{Counter: "a", Before: i64(1), After: 5, Sent: true},
		{Counter: "b", Before: i64(7), After: 7},               // in sync: [id, value]
		{Counter: "c", After: 3},                               // no value before (a new plan)
		{Counter: "d", Before: i64(-2), After: -2, Sent: true}, // sent, though unchanged
		{Counter: "e", Before: i64(4), After: 9},
	}
	ids := map[string]int64{"a": 1, "b": 22, "c": 333, "d": 4, "e": 5}
	col := packWriteCounters(cs, ids)
	if want := `[[1,1,5,1],[22,7],[333,null,3,0],[4,-2,-2,1],[5,4,9,0]]`; col != want {
		t.Errorf("packed %s, want %s", col, want)
	}
	names := map[int64]string{}
	for n, id := range ids {
		names[id] = n
	}
	got, err := unpackWriteCounters([]byte(col), func(id int64) (string, error) { return names[id], nil })
	if err != nil || !reflect.DeepEqual(got, cs) {
		t.Errorf("read back %+v (%v), want %+v", got, err, cs)
	}
	// As PostgreSQL gives JSON back: with spaces.
	if got, err := unpackWriteCounters([]byte(`[[1, 1, 5, 1], [22, 7]]`), func(id int64) (string, error) { return names[id], nil }); err != nil || len(got) != 2 || got[1].After != 7 {
		t.Errorf("with spaces: %+v, %v", got, err)
	}
	if _, err := unpackWriteCounters([]byte(`[[1,1,5`), func(int64) (string, error) { return "", nil }); err == nil {
		t.Error("a cut column read without an error")
	}
}

// TestPackedLastValues: a last values column reads back by counter, from
// SQLite's form and PostgreSQL's (spaces, keys reordered), a value carried
// over from an older store with its run, time and file.
func TestPackedLastValues(t *testing.T) {
	ids := map[string]int64{"a": 1, "b": 22}
	names := func(id int64) (string, error) { return map[int64]string{1: "a", 22: "b"}[id], nil }
	col := packLast([]pipeline.CounterWrite{{Counter: "a", After: -5}, {Counter: "b", After: 123456789012}}, ids, 77)
	if want := `{"1":[-5,77],"22":[123456789012,77]}`; col != want {
		t.Errorf("packed %s, want %s", col, want)
	}
	for _, in := range []string{col, `{"1": [-5, 77], "22": [123456789012, 77]}`} {
		got := map[string]lastEntry{}
		if err := eachLast([]byte(in), names, func(n string, e lastEntry) { got[n] = e }); err != nil ||
			!reflect.DeepEqual(got, map[string]lastEntry{"a": {value: -5, write: 77}, "b": {value: 123456789012, write: 77}}) {
			t.Errorf("%s read back %+v, %v", in, got, err)
		}
	}
	carried := packCarried(map[int64]lastEntry{22: {value: 9, run: 3, at: "2026-01-02T03:04:05.000000000Z", file: `a "b".xlsx`}}, []int64{22})
	got := map[string]lastEntry{}
	if err := eachLast([]byte(carried), names, func(n string, e lastEntry) { got[n] = e }); err != nil ||
		!reflect.DeepEqual(got["b"], lastEntry{value: 9, run: 3, at: "2026-01-02T03:04:05.000000000Z", file: `a "b".xlsx`}) {
		t.Errorf("%s read back %+v, %v", carried, got, err)
	}
}

// TestPackedNullWhereAValueIsDue: null stands only for a counter's value
// before (no value, a new plan); anywhere else, a damaged column, it is
// an error, not a value of 0.
func TestPackedNullWhereAValueIsDue(t *testing.T) {
	name := func(int64) (string, error) { return "a", nil }
	for _, col := range []string{`[[null,1,5,1]]`, `[[1,null]]`, `[[1,1,null,1]]`, `[[1,1,5,null]]`} {
		if got, err := unpackWriteCounters([]byte(col), name); err == nil {
			t.Errorf("%s read as %+v without an error", col, got)
		}
	}
	for _, col := range []string{`{"null":[1,2]}`, `{"1":[null,2]}`, `{"1":[1,null]}`, `{"1":[1,0,null,"t","f"]}`} {
		if err := eachLast([]byte(col), name, func(string, lastEntry) {}); err == nil {
			t.Errorf("%s read without an error", col)
		}
	}
}

// generalLast reads a last values column as eachLast does, with the
// general reading alone (no compactLast): what eachLast must agree with.
func generalLast(col []byte, fn func(id int64, e lastEntry)) error {
	p := &scanner{s: col}
	p.want('{')
	first := true
	for p.err == nil && !p.eat('}') {
		if !first {
			p.want(',')
		}
		first = false
		id, e := p.lastItem()
		if p.err != nil {
			break
		}
		fn(id, e)
	}
	return p.err
}

// FuzzLastValuesColumn: eachLast reads any column as the general reading
// does (the same entries, in order, and an error for the same columns),
// and never panics.
//
//	go test ./pipeline/statestore -run '^$' -fuzz FuzzLastValuesColumn -fuzztime 20s
func FuzzLastValuesColumn(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"1":[-5,77],"22":[123456789012,77]}`, `{"1": [-5, 77], "22": [123456789012, 77]}`,
		`{"1":[5,0,3,"2026-01-02T03:04:05.000000000Z","a \"b\".xlsx"],"2":[1,2]}`,
		`{"1":[5,77]`, `{"1":[null,77]}`, `{"1":[5,77,]}`, `{"1":[1234567890123456789,1]}`, `{"-0":[007,-1]}`,
		`{"1":[5,77],"2":[6,78] }`, `{"1":[5 ,77]}`, `{"1":[5,77]x}`, `{"1":[-,77]}`, `{"12345678901234567890":[1,2]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, col []byte) {
		type entry struct {
			id int64
			e  lastEntry
		}
		var got, want []entry
		err := eachLast(col, func(id int64) (string, error) { return strconv.FormatInt(id, 10), nil }, func(n string, e lastEntry) {
			id, _ := strconv.ParseInt(n, 10, 64)
			got = append(got, entry{id, e})
		})
		werr := generalLast(col, func(id int64, e lastEntry) { want = append(want, entry{id, e}) })
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: read %+v (%v), the general reading %+v (%v)", col, got, err, want, werr)
		}
	})
}

// BenchmarkEachLast reads the last values column of a target of the 90
// counters of the built-in catalog, as SQLite gives it back. ns/op is per
// column.
//
//	go test ./pipeline/statestore -run '^$' -bench EachLast -benchmem
func BenchmarkEachLast(b *testing.B) {
	names := pipeline.DefaultCatalog().Names()
	ids := map[string]int64{}
	byID := make([]string, len(names)+1)
	var cs []pipeline.CounterWrite
	for i, n := range names {
		ids[n] = int64(i + 1)
		byID[i+1] = n
		cs = append(cs, pipeline.CounterWrite{Counter: n, After: int64(i * 137)})
	}
	col := []byte(packLast(cs, ids, 1234567))
	name := func(id int64) (string, error) { return byID[id], nil }
	b.SetBytes(int64(len(col)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := eachLast(col, name, func(string, lastEntry) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}
