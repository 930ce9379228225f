package propose

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// ProfileOf reads a profile from a plan as the readers describe one: one
// financial year with both targets (eepipe profile -o writes one). A
// counter it leaves blank is 0, and named in blank.
func ProfileOf(p *pipeline.InputPlan) (c Counts, blank []string, err error) {
	byType := map[string]pipeline.Counters{}
	for _, t := range p.Targets {
		if _, dup := byType[t.TargetType]; dup {
			return c, nil, fmt.Errorf("a profile is one year's workforce, and this one has several years of %s", t.TargetType)
		}
		byType[t.TargetType] = t.Counters
	}
	for _, tt := range pipeline.TargetTypes {
		if _, ok := byType[tt]; !ok {
			return c, nil, fmt.Errorf("no %s counters: a profile has both targets (eepipe profile -o writes them)", tt)
		}
	}
	c, blank = CountsOf(byType[pipeline.TargetAll], byType[pipeline.TargetDisabled])
	return c, blank, nil
}

// ParseWeights reads race weights given as RACE=WEIGHT pairs (Options.
// Weights): the designated races, whole numbers from 0 to 1,000,000, a
// man's race (african, coloured, indian) among them above 0. No pairs give
// nil: the default rule.
func ParseWeights(pairs []string) (map[string]int64, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	races := sector.DesignatedRaces("female")
	out := map[string]int64{}
	for _, p := range pairs {
		race, w, ok := strings.Cut(p, "=")
		race = strings.ToLower(strings.TrimSpace(race))
		n, err := strconv.ParseInt(strings.TrimSpace(w), 10, 64)
		switch {
		case !ok || err != nil || n < 0 || n > 1_000_000:
			return nil, fmt.Errorf("%q: give RACE=WEIGHT, a whole number from 0 to 1000000", p)
		case !pipeline.Contains(races, race):
			return nil, fmt.Errorf("%q: %q is not a designated race (%s)", p, race, strings.Join(races, ", "))
		}
		out[race] = n
	}
	var men int64
	for _, r := range sector.DesignatedRaces("male") {
		men += out[r]
	}
	if men == 0 {
		return nil, errors.New("give a weight above 0 to african, coloured or indian (the designated races of men)")
	}
	return out, nil
}

// MaxProfileJSON is the largest JSON profile ProfileJSON reads: a profile
// is two targets of counters, a few kilobytes, with the rows not counted.
const MaxProfileJSON = 64 << 20

// ProfileJSON reads a profile as eepipe profile --json prints it: its
// "targets" object, all_employees and disabled_employees, each a map of
// counter names to whole numbers of 0 or more. A counter of the default
// catalog it leaves out is 0, and named in blank; a name that is not a
// counter of the default catalog is an error.
func ProfileJSON(r io.Reader) (c Counts, blank []string, err error) {
	var doc struct {
		Targets map[string]map[string]json.Number `json:"targets"`
	}
	dec := json.NewDecoder(io.LimitReader(r, MaxProfileJSON))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return c, nil, fmt.Errorf("not a profile as eepipe profile --json prints one: %v", err)
	}
	cat := pipeline.DefaultCatalog()
	got := map[string]pipeline.Counters{}
	for tt, counters := range doc.Targets {
		if !pipeline.Contains(pipeline.TargetTypes, tt) {
			return c, nil, fmt.Errorf("targets: %q is not a target type (%s)", tt, strings.Join(pipeline.TargetTypes, ", "))
		}
		m := map[string]int64{}
		for name, v := range counters {
			n, err := strconv.ParseInt(v.String(), 10, 64)
			switch {
			case !cat.Has(name):
				return c, nil, fmt.Errorf("targets: %s: %q is not a counter", tt, name)
			case err != nil || n < 0:
				return c, nil, fmt.Errorf("targets: %s: %s: %s is not a whole number of 0 or more", tt, name, v)
			}
			m[name] = n
		}
		got[tt] = pipeline.CountersOf(m)
	}
	for _, tt := range pipeline.TargetTypes {
		if _, ok := got[tt]; !ok {
			return c, nil, fmt.Errorf("targets: no %s counters: a profile has both targets", tt)
		}
	}
	c, blank = CountsOf(got[pipeline.TargetAll], got[pipeline.TargetDisabled])
	return c, blank, nil
}
