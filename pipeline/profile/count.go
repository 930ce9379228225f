package profile

import (
	"fmt"

	"github.com/eepipe/eepipe/pipeline"
)

// Unclassified is a roster row that is not counted, and why.
type Unclassified struct {
	File   string `json:"file"`
	Row    int    `json:"row"`
	Reason string `json:"reason"`
}

// Counter counts employees, one Add at a time, into the counters of the
// default catalog. Its memory is the counts, the employee numbers seen and
// the rows not counted: a roster is streamed through it.
type Counter struct {
	vocab Vocabulary
	// memo remembers what a cell's text folds to: a roster repeats a few
	// words in every row.
	memo map[string]string
	// seen is the first row of each employee number.
	seen map[string]rowAt
	// counts by target (0 all, 1 disabled), race, gender and level, in
	// the order of pipeline.Races, Genders and Levels.
	counts       [2][5][2][9]int64
	employees    int
	classified   int
	unclassified []Unclassified
}

type rowAt struct {
	file    string
	row     int
	counted bool
}

// maxMemo bounds the fold memo: a column of free text (names) must not
// grow it without end.
const maxMemo = 4096

// NewCounter returns a Counter reading words through vocab.
func NewCounter(vocab Vocabulary) *Counter {
	return &Counter{vocab: vocab, memo: map[string]string{}, seen: map[string]rowAt{}}
}

func (c *Counter) fold(s string) string {
	if f, ok := c.memo[s]; ok {
		return f
	}
	f := c.vocab.Fold(s)
	if len(c.memo) < maxMemo {
		c.memo[s] = f
	}
	return f
}

// Add counts one employee, or lists the row as unclassified with the
// reason: every row it is given is one or the other (the reader skips the
// rows with no text in any cell). A row whose employee number an earlier
// row has is a duplicate and is not counted.
func (c *Counter) Add(e *Employee) {
	c.employees++
	n := trimmed(e.Values[ColNumber])
	if first, dup := c.seen[n]; dup && n != "" {
		which := "which is counted"
		if !first.counted {
			which = "which is not counted either (see its reason)"
		}
		c.unclassified = append(c.unclassified, Unclassified{File: e.File, Row: e.Row,
			Reason: fmt.Sprintf("duplicate: employee number %s is also on row %d of %s, %s", n, first.row, first.file, which)})
		return
	}
	emp, why := c.classify(e)
	if n != "" {
		c.seen[n] = rowAt{e.File, e.Row, why == ""}
	}
	if why != "" {
		c.unclassified = append(c.unclassified, Unclassified{File: e.File, Row: e.Row, Reason: why})
		return
	}
	c.classified++
	r, g := index(pipeline.Races, emp.race), index(pipeline.Genders, emp.gender)
	levels := []int{index(pipeline.Levels, emp.level), index(pipeline.Levels, "total_permanent_employees")}
	if emp.temporary {
		levels = []int{index(pipeline.Levels, "temporary_employees")}
	}
	levels = append(levels, index(pipeline.Levels, "grand_total_employees"))
	for t := 0; t < 2; t++ {
		if t == 1 && !emp.disabled {
			break
		}
		for _, l := range levels {
			c.counts[t][r][g][l]++
		}
	}
}

func trimmed(s string) string {
	start, end := 0, len(s)
	for start < end && (s[start] == ' ' || s[start] == '\t') {
		start++
	}
	for end > start && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return s[start:end]
}

func index(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	panic("profile: " + s + " is not a catalog name")
}

// Profile is a roster counted: how many employees it lists, how many were
// counted, the rows that were not, and the counters of both targets. Its
// JSON is eepipe profile --json's (docs/profile-and-propose.md).
type Profile struct {
	Employees    int                          `json:"employees"`
	Classified   int                          `json:"classified"`
	Unclassified []Unclassified               `json:"unclassified"`
	Targets      map[string]pipeline.Counters `json:"targets"`
}

// Profile returns what the counter has counted so far: every counter of
// the default catalog set, zeros included.
func (c *Counter) Profile() *Profile {
	p := &Profile{Employees: c.employees, Classified: c.classified, Unclassified: c.unclassified,
		Targets: map[string]pipeline.Counters{}}
	if p.Unclassified == nil {
		p.Unclassified = []Unclassified{}
	}
	for t, tt := range []string{pipeline.TargetAll, pipeline.TargetDisabled} {
		m := make(map[string]int64, 90)
		for r, race := range pipeline.Races {
			for g, gender := range pipeline.Genders {
				for l, level := range pipeline.Levels {
					m[pipeline.CounterName(race, gender, level)] = c.counts[t][r][g][l]
				}
			}
		}
		p.Targets[tt] = pipeline.CountersOf(m)
	}
	return p
}

// Unreadable lists a row that the reader could not read (a malformed CSV
// line, text that is not UTF-8) as unclassified, with the reason.
func (c *Counter) Unreadable(file string, row int, reason string) {
	c.employees++
	c.unclassified = append(c.unclassified, Unclassified{File: file, Row: row, Reason: reason})
}
