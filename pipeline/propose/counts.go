package propose

import (
	"fmt"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// Target, race, gender and level indexes of Counts, in the order of
// pipeline.Races, Genders and Levels.
const (
	all, disabled = 0, 1

	african, coloured, indian, white, foreign = 0, 1, 2, 3, 4
	male, female                              = 0, 1

	levelTotalPermanent = 6
	levelTemporary      = 7
	levelGrandTotal     = 8
	occupationalLevels  = 6
)

// Counts are a workforce's counters of both targets (all_employees,
// disabled_employees) by race, gender and level.
type Counts [2][5][2][9]int64

// CountsOf reads the counters of a profile's two targets. A counter of the
// six occupational levels or of the temporary row that is blank is 0 and
// is named in blank; the total rows are worked out from the levels.
func CountsOf(allEmployees, disabledEmployees pipeline.Counters) (c Counts, blank []string) {
	for t, counters := range []pipeline.Counters{allEmployees, disabledEmployees} {
		for r, race := range pipeline.Races {
			for g, gender := range pipeline.Genders {
				for l, level := range pipeline.Levels {
					if l == levelTotalPermanent || l == levelGrandTotal {
						continue
					}
					name := pipeline.CounterName(race, gender, level)
					v, ok := counters.ByName(name)
					if !ok {
						blank = append(blank, fmt.Sprintf("%s %s", pipeline.TargetTypes[t], name))
					}
					c[t][r][g][l] = v
				}
			}
		}
	}
	c.total()
	return c, blank
}

// disabledWithin refuses counts with more people with disabilities in a
// cell than employees: disabled employees are part of all employees, and
// a plan worked out from such a profile would keep the excess.
func (c *Counts) disabledWithin() error {
	for r, race := range pipeline.Races {
		for g, gender := range pipeline.Genders {
			for l, level := range pipeline.Levels {
				if d, a := c[disabled][r][g][l], c[all][r][g][l]; d > a {
					return fmt.Errorf("the profile counts %s as %s but %s: disabled employees are part of all employees",
						pipeline.Plural(int(d), "person with a disability", "people with disabilities"), pipeline.CounterName(race, gender, level), pipeline.Plural(int(a), "employee"))
				}
			}
		}
	}
	return nil
}

// total works out the total rows: total permanent is the six levels, the
// grand total that and the temporary employees.
func (c *Counts) total() {
	for t := range c {
		for r := range c[t] {
			for g := range c[t][r] {
				var perm int64
				for l := 0; l < occupationalLevels; l++ {
					perm += c[t][r][g][l]
				}
				c[t][r][g][levelTotalPermanent] = perm
				c[t][r][g][levelGrandTotal] = perm + c[t][r][g][levelTemporary]
			}
		}
	}
}

// Counters returns one target's counters, every counter of the default
// catalog set.
func (c *Counts) Counters(t int) pipeline.Counters {
	m := make(map[string]int64, 90)
	for r, race := range pipeline.Races {
		for g, gender := range pipeline.Genders {
			for l, level := range pipeline.Levels {
				m[pipeline.CounterName(race, gender, level)] = c[t][r][g][l]
			}
		}
	}
	return pipeline.CountersOf(m)
}

// head is a level's headcount of all employees: every race, both genders.
func (c *Counts) head(l int) int64 {
	var n int64
	for r := range c[all] {
		for g := range c[all][r] {
			n += c[all][r][g][l]
		}
	}
	return n
}

// designated is a level's designated-group count of a gender.
func (c *Counts) designated(g, l int) int64 {
	var n int64
	for _, r := range designatedRaces(g) {
		n += c[all][r][g][l]
	}
	return n
}

// designatedRaces are the races of pipeline.DesignatedRaces, as indexes.
func designatedRaces(g int) []int {
	var out []int
	for _, race := range sector.DesignatedRaces(pipeline.Genders[g]) {
		for r, name := range pipeline.Races {
			if name == race {
				out = append(out, r)
			}
		}
	}
	return out
}

// sixLevels sums one target over the six occupational levels.
func (c *Counts) sixLevels(t int) int64 {
	var n int64
	for r := range c[t] {
		for g := range c[t][r] {
			n += c[t][r][g][levelTotalPermanent]
		}
	}
	return n
}
