package propose

import (
	"sort"

	"github.com/eepipe/eepipe/pipeline"
)

// The years between the profile and the final year. The plan's changes
// are units (a person who joins, changes group, or is counted as having a
// disability); each year applies a larger share of them, in whole units,
// the final year all. A counter that some units raise and others lower
// (a total row summing a level that gains and one that loses) would not
// move one way only, so every unit touching such a counter is applied in
// the same year: the units form groups (connected through such counters),
// and a year applies whole groups. Every counter then lies between its
// profile and final value and moves one way over the years.

// counterKey is a counter of Counts, by target, race, gender and level.
type counterKey struct{ t, r, g, l int }

// touches lists the counters a unit changes, with the total rows its cells
// add to, and the sign of each change.
func (u *unit) touches(f func(k counterKey, d int64)) {
	for _, c := range u.changes {
		f(counterKey{c.t, c.r, c.g, c.l}, c.d)
		if c.l < occupationalLevels {
			f(counterKey{c.t, c.r, c.g, levelTotalPermanent}, c.d)
		}
		f(counterKey{c.t, c.r, c.g, levelGrandTotal}, c.d)
	}
}

// groups returns the units' groups in the order they are applied: the
// units taken level by level in turn, each group where its first unit is.
func groups(units []unit) [][]int {
	order := interleave(units)
	parent := make([]int, len(units))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	type seen struct {
		up, down bool
		first    int
		units    []int
	}
	by := map[counterKey]*seen{}
	for i := range units {
		units[i].touches(func(k counterKey, d int64) {
			s := by[k]
			if s == nil {
				s = &seen{first: i}
				by[k] = s
			}
			s.up = s.up || d > 0
			s.down = s.down || d < 0
			s.units = append(s.units, i)
		})
	}
	for _, s := range by {
		if s.up && s.down {
			for _, i := range s.units {
				parent[find(i)] = find(s.first)
			}
		}
	}
	pos := make([]int, len(units))
	for p, i := range order {
		pos[i] = p
	}
	members := map[int][]int{}
	for _, i := range order {
		root := find(i)
		members[root] = append(members[root], i)
	}
	out := make([][]int, 0, len(members))
	for _, m := range members {
		out = append(out, m)
	}
	sort.Slice(out, func(a, b int) bool { return pos[out[a][0]] < pos[out[b][0]] })
	return out
}

// interleave orders the units so that every level's changes advance
// together: a level's k-th of n units at (k+1/2)/n of the way, each
// level's in the order they were made.
func interleave(units []unit) []int {
	count := make([]int, len(pipeline.Levels))
	for _, u := range units {
		count[u.level]++
	}
	seen := make([]int, len(pipeline.Levels))
	at := make([]float64, len(units))
	out := make([]int, len(units))
	for i, u := range units {
		at[i] = (float64(seen[u.level]) + 0.5) / float64(count[u.level])
		seen[u.level]++
		out[i] = i
	}
	sort.SliceStable(out, func(a, b int) bool { return at[out[a]] < at[out[b]] })
	return out
}

// result builds the years: year k of n applies the whole groups that fit
// in k/n of the units (the final year all of them).
func (b *builder) result() *Result {
	gs := groups(b.units)
	n := len(b.opts.Years)
	res := &Result{Shortfalls: b.shortfalls, Rule: DefaultRule}
	if res.Shortfalls == nil {
		res.Shortfalls = []Shortfall{}
	}
	if b.opts.Weights != nil {
		res.Rule = "by the weights given"
	}
	state := b.start
	moves := make([]int64, len(pipeline.Levels))
	done := make([]bool, len(gs))
	applied := 0
	for k := 1; k <= n; k++ {
		goal := len(b.units) * k / n
		// Whole groups in order, each that still fits this year's share
		// (a large group waits for a later year, the smaller ones after it
		// go ahead).
		for i, g := range gs {
			if done[i] || (k < n && applied+len(g) > goal) {
				continue
			}
			for _, j := range g {
				u := &b.units[j]
				for _, c := range u.changes {
					state[c.t][c.r][c.g][c.l] += c.d
				}
				if u.move {
					moves[u.level]++
				}
			}
			applied += len(g)
			done[i] = true
		}
		state.total()
		res.Years = append(res.Years, yearOf(k, b.opts.Years[k-1], k == n, state, moves))
	}
	return res
}

func yearOf(k int, fy pipeline.FinancialYear, final bool, c Counts, moves []int64) Year {
	y := Year{YearNumber: k, FinancialYear: fy.String(), fy: fy, Final: final, Counts: c,
		Employees: c.sixLevels(all), Disabled: c.sixLevels(disabled)}
	for l := 0; l < occupationalLevels; l++ {
		ly := LevelYear{Level: pipeline.Levels[l], Headcount: c.head(l),
			DesignatedMale: c.designated(male, l), DesignatedFemale: c.designated(female, l), Moves: moves[l]}
		if ly.Headcount > 0 {
			ly.DesignatedMalePct = float64(ly.DesignatedMale) * 100 / float64(ly.Headcount)
			ly.DesignatedFemalePct = float64(ly.DesignatedFemale) * 100 / float64(ly.Headcount)
		}
		y.Levels = append(y.Levels, ly)
	}
	return y
}

// InputPlan returns the plan as the plan readers describe one: base's
// name, company, dates and sector, and two targets a year, every counter
// set.
func (r *Result) InputPlan(base pipeline.InputPlan) *pipeline.InputPlan {
	p := base
	p.Targets = nil
	for _, y := range r.Years {
		for t, tt := range pipeline.TargetTypes {
			p.Targets = append(p.Targets, &pipeline.InputTarget{YearNumber: y.YearNumber, FinancialYear: y.fy, TargetType: tt, Counters: y.Counts.Counters(t)})
		}
	}
	return &p
}
