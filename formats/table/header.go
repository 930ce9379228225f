package table

import (
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/pipeline"
)

// flatHeaderCell is one cell of a header row.
type flatHeaderCell struct {
	col    int
	text   string
	origin pipeline.Origin
}

// flatHeader maps the columns of a flat table to canonical names.
type flatHeader struct {
	byCol    map[int]string // 1-based column -> canonical name, for the columns read
	named    map[int]bool   // columns with any header text, read or not
	unheaded map[int]bool   // columns without a header already reported
	names    []string       // byCol as a slice indexed by column ("": not read), for the rows
	cols     []int          // the columns of byCol, in order
}

// name returns the canonical name of a column read, as byCol does.
func (h *flatHeader) name(col int) (string, bool) {
	if col < 0 || col >= len(h.names) || h.names[col] == "" {
		return "", false
	}
	return h.names[col], true
}

// checkUnheaded warns, once per column, about a value in a column that has
// no header: it is not read, and the person may have forgotten the header.
func (h *flatHeader) checkUnheaded(col int, o pipeline.Origin, value string, ps *pipeline.Problems) {
	if h.named[col] || h.unheaded[col] || strings.TrimSpace(value) == "" {
		return
	}
	h.unheaded[col] = true
	ps.Warnf(o, value, "this column has values but no header, so it is not read; give it a header (for example a number_of_... counter name) or clear it")
}

// buildFlatHeader matches header names case-insensitively after trimming:
// known columns and catalog counters are read (a counter also when its
// name is written with spaces or hyphens for the underscores); an unknown
// column whose name, so read, starts with number_of_ or numberof is an
// error with the closest counters suggested (a misspelt counter must never
// be dropped silently); any other unknown column is a warning and ignored,
// with the closest flat columns or counters suggested; a column named twice
// is an error and only its first occurrence is read.
//
// A mapping file's columns (words) name further headers: a header the file
// teaches ("Plan title" for plan_name) reads as its column.
func buildFlatHeader(cells []flatHeaderCell, cat *pipeline.Catalog, words *mapping.File, ps *pipeline.Problems) *flatHeader {
	h := &flatHeader{byCol: map[int]string{}, named: map[int]bool{}, unheaded: map[int]bool{}}
	first := map[string]pipeline.Origin{}
	var known []string // the flat columns and the counters, for suggestions
	for _, c := range cells {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(c.text, "\ufeff")))
		if name == "" {
			continue
		}
		h.named[c.col] = true
		o := c.origin
		counterLike := readCounterLike(name)
		if !pipeline.IsFlatColumn(name) && !cat.Has(name) && cat.Has(counterLike) {
			name = counterLike // "Number of African male top managers"
		}
		if taught, ok := words.Column(c.text); ok && !pipeline.IsFlatColumn(name) && !cat.Has(name) {
			name = taught
		}
		switch {
		case pipeline.IsFlatColumn(name) || cat.Has(name):
			if prev, dup := first[name]; dup {
				ps.Errorf(o, c.text, "the column %s appears twice (first at %s); only the first one is read: delete or rename the other", name, Place(prev))
				continue
			}
			first[name] = o
			h.byCol[c.col] = name
			if c.col >= len(h.names) {
				h.names = append(h.names, make([]string, c.col+1-len(h.names))...)
			}
			h.names[c.col] = name
		case strings.HasPrefix(counterLike, pipeline.CounterPrefix) || strings.HasPrefix(counterLike, "numberof"):
			*ps = append(*ps, pipeline.Problem{Severity: pipeline.Error, Origin: o, Value: pipeline.Excerpt(c.text),
				Message:     fmt.Sprintf("the column %q is not a counter of the catalog; a misspelt counter is never skipped silently: correct the header", pipeline.Excerpt(c.text)),
				Suggestions: cat.Suggest(counterLike, 3), Code: pipeline.CodeUnknownCounter})
		default:
			if known == nil {
				known = append(append(known, pipeline.FlatColumns...), cat.Names()...)
			}
			*ps = append(*ps, pipeline.Problem{Severity: pipeline.Warning, Origin: o, Value: pipeline.Excerpt(c.text),
				Message:     fmt.Sprintf("the column %q is not one eepipe knows; it is ignored", pipeline.Excerpt(c.text)),
				Suggestions: pipeline.Closest(counterLike, known, 2)})
		}
	}
	for col, name := range h.names {
		if name != "" {
			h.cols = append(h.cols, col)
		}
	}
	return h
}

// readCounterLike normalises a lower-cased header for matching counters:
// each run of spaces, tabs and hyphens reads as one underscore, so that
// "number of african male top managers" and
// "number-of-african-male-top-managers" name
// number_of_african_male_top_managers.
func readCounterLike(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '-' || r == '\u00a0'
	}), "_")
}

// Place is an origin's place without the file: "Targets!F12" or
// "line 1, column 5".
func Place(o pipeline.Origin) string {
	o.File, o.Header = "", ""
	return strings.TrimPrefix(strings.TrimPrefix(o.String(), "."), " ")
}
