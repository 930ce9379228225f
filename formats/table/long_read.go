package table

import (
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/templates"
)

// Columns of the long table (docs/formats.md, the long table) beside the flat ones.
const (
	longColRace    = "race"
	longColGender  = "gender"
	longColLevel   = "level"
	longColCounter = "counter"
	longColValue   = "value"
)

// isLongHeader reports whether a CSV header row is the long table's: it
// names target_type, counter and value columns.
func isLongHeader(fields []string) bool {
	has := map[string]bool{}
	for _, f := range fields {
		has[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(f, "\ufeff")))] = true
	}
	return has[pipeline.ColTargetType] && has[longColCounter] && has[longColValue]
}

// longTable turns the rows of a long table into flat records: one record
// per (plan, year, target type), holding the row's plan columns and, for
// each counter, the row's value cell (so problems and reports point at the
// value the file gives).
type longTable struct {
	file    string
	cat     *pipeline.Catalog
	ps      *pipeline.Problems
	plan    map[int]string // 1-based column -> flat column name
	counter int            // 1-based column of counter
	value   int            // 1-based column of value
	// parts are the 1-based columns of race, gender and level (0: absent),
	// checked against the counter each line names.
	parts [3]int
	m     *templates.Matcher
	// seen caches what a part's text reads as (part index and text -> key,
	// "" when it names none): the same few texts repeat on every line.
	seen  map[partText]string
	recs  map[string]*pipeline.Record
	first map[string]map[string]int // record key -> counter -> line it was first given on
	order []string
}

// partText is a race, gender or level column's text (part 0, 1, 2).
type partText struct {
	part int
	text string
}

// newLongTable reads the header cells of a long table.
func newLongTable(file string, cells []flatHeaderCell, cat *pipeline.Catalog, ps *pipeline.Problems) *longTable {
	t := &longTable{file: file, cat: cat, ps: ps, plan: map[int]string{},
		recs: map[string]*pipeline.Record{}, first: map[string]map[string]int{}}
	seen := map[string]pipeline.Origin{}
	for _, c := range cells {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(c.text, "\ufeff")))
		if name == "" {
			continue
		}
		if prev, dup := seen[name]; dup {
			ps.Errorf(c.origin, c.text, "the column %s appears twice (first at %s); only the first one is read: delete or rename the other", name, Place(prev))
			continue
		}
		seen[name] = c.origin
		switch {
		case name == longColCounter:
			t.counter = c.col
		case name == longColValue:
			t.value = c.col
		case name == longColRace:
			t.parts[0] = c.col
		case name == longColGender:
			t.parts[1] = c.col
		case name == longColLevel:
			t.parts[2] = c.col
		case pipeline.IsFlatColumn(name):
			t.plan[c.col] = name
		default:
			*ps = append(*ps, pipeline.Problem{Severity: pipeline.Warning, Origin: c.origin, Value: pipeline.Excerpt(c.text),
				Message:     fmt.Sprintf("the column %q is not one of the long table's; it is ignored", pipeline.Excerpt(c.text)),
				Suggestions: pipeline.Closest(name, append([]string{longColCounter, longColValue}, pipeline.FlatColumns...), 2)})
		}
	}
	return t
}

// add reads one data row; pos returns the line a field starts on.
func (t *longTable) add(fields []string, line int, pos func(field int) int) {
	var key strings.Builder
	for col := 1; col <= len(fields); col++ {
		if name, ok := t.plan[col]; ok {
			// One plan's lines spell its identifiers alike or not (the
			// assembler's grouping rule).
			fmt.Fprintf(&key, "%s=%s\x00", name, assemble.PlanColumnKey(name, fields[col-1]))
		}
	}
	k := key.String()
	rec := t.recs[k]
	if rec == nil {
		rec = &pipeline.Record{Origin: pipeline.Origin{File: t.file, Row: line}, Cells: map[string]pipeline.Cell{}}
		for col, name := range t.plan {
			c := pipeline.Cell{Origin: pipeline.Origin{File: t.file, Row: pos(col - 1), Column: col, Header: name}}
			if v := fields[col-1]; strings.TrimSpace(v) != "" {
				c.Kind, c.Text = pipeline.CellText, CSVUnsafeField(strings.ToValidUTF8(v, "\uFFFD"))
			}
			rec.Cells[name] = c
		}
		t.recs[k] = rec
		t.first[k] = map[string]int{}
		t.order = append(t.order, k)
	}
	counterOrigin := pipeline.Origin{File: t.file, Row: pos(t.counter - 1), Column: t.counter, Header: longColCounter}
	raw := strings.TrimSpace(fields[t.counter-1])
	name := strings.ToLower(raw)
	switch {
	case name == "":
		t.ps.Errorf(counterOrigin, "", "the counter is blank: name the counter this line's value is for (number_of_...)")
		return
	case !t.cat.Has(name):
		*t.ps = append(*t.ps, pipeline.Problem{Severity: pipeline.Error, Origin: counterOrigin, Value: pipeline.Excerpt(raw),
			Message:     fmt.Sprintf("%q is not a counter of the catalog; a misspelt counter is never skipped silently: correct it", pipeline.Excerpt(raw)),
			Suggestions: t.cat.Suggest(name, 3), Code: pipeline.CodeUnknownCounter})
		return
	}
	if !t.partsAgree(fields, name, pos) {
		return
	}
	if prev, dup := t.first[k][name]; dup {
		t.ps.Errorf(counterOrigin, raw, "%s is given twice for the same plan, year and target type (first on line %d); keep one line", name, prev)
		return
	}
	t.first[k][name] = line
	v := fields[t.value-1]
	c := pipeline.Cell{Origin: pipeline.Origin{File: t.file, Row: pos(t.value - 1), Column: t.value, Header: name}}
	if strings.TrimSpace(v) != "" {
		c.Kind, c.Text = pipeline.CellText, CSVUnsafeField(strings.ToValidUTF8(v, "\uFFFD"))
	}
	rec.Cells[name] = c
}

// partsAgree checks the race, gender and level columns of a line against
// the counter it names: the counter column decides which counter the value
// sets, so a line whose race, gender or level says another (a pivot edited
// by hand) is an error at that cell, never a value filed under the wrong
// counter. Blank parts, and counters whose name the catalog's races,
// genders and levels do not spell out, are not checked.
func (t *longTable) partsAgree(fields []string, counter string, pos func(field int) int) bool {
	race, gender, level, ok := pipeline.ParseCounterName(counter)
	if !ok {
		return true
	}
	if t.m == nil {
		t.m, t.seen = templates.NewMatcher(t.cat), map[partText]string{}
	}
	want := [3]string{race, gender, level}
	what := [3]string{longColRace, longColGender, longColLevel}
	read := func(i int, text string) string {
		if k, ok := t.seen[partText{i, text}]; ok {
			return k
		}
		k, _ := [3]func(string) (string, bool){t.m.Race, t.m.Gender, t.m.Level}[i](text)
		if len(t.seen) < 10000 {
			t.seen[partText{i, strings.Clone(text)}] = k
		}
		return k
	}
	for i, col := range t.parts {
		if read(i, want[i]) != want[i] {
			return true // the catalog does not spell this counter's parts out
		}
		if col == 0 || col > len(fields) || strings.TrimSpace(fields[col-1]) == "" {
			continue
		}
		given := strings.TrimSpace(fields[col-1])
		if read(i, given) != want[i] {
			t.ps.Errorf(pipeline.Origin{File: t.file, Row: pos(col - 1), Column: col, Header: what[i]}, pipeline.Excerpt(given),
				"the %s %q does not agree with the counter %s (%s %s) on this line; the counter column decides which counter the value sets, so correct the one that is wrong",
				what[i], pipeline.Excerpt(given), counter, what[i], want[i])
			return false
		}
	}
	return true
}

// flush emits the records in the order their first line came and returns
// how many it emitted.
func (t *longTable) flush(emit func(pipeline.Record)) int {
	for _, k := range t.order {
		emit(*t.recs[k])
	}
	return len(t.order)
}
