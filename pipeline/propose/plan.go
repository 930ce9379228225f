package propose

import (
	"errors"
	"fmt"
	"math"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// Options say what plan to work out.
type Options struct {
	Sector  string                // the service's sector value
	Targets *sector.SectorTargets // nil: the embedded figures
	Years   []pipeline.FinancialYear
	// Growth is each level's growth a year, in percent (0: none); a
	// level's final headcount is its profile's grown over the plan's years,
	// rounded.
	Growth float64
	// Weights split the people who join a designated group among its
	// races (african, coloured, indian, and white for women), by race
	// name; nil: in proportion to the group's people already at the level
	// (DefaultRule).
	Weights map[string]int64
}

// DefaultRule is how the people who join a designated group are chosen
// among its races when Options.Weights is nil.
const DefaultRule = "in proportion to the designated people of that gender already at the level; when there are none, to those of the six levels together; when there are none either, African"

// Shortfall is a target the plan cannot meet, and why.
type Shortfall struct {
	Level  string `json:"level"`  // a level of pipeline.SectorLevels, or "all" for people with disabilities
	Target string `json:"target"` // designated_male, designated_female or disabled
	Reason string `json:"reason"`
}

// Result is the plan worked out: its years, the final year last.
type Result struct {
	Years      []Year      `json:"years"`
	Shortfalls []Shortfall `json:"shortfalls"`
	Rule       string      `json:"race_rule"`
}

// Year is one financial year of the plan.
type Year struct {
	YearNumber    int         `json:"year_number"`
	FinancialYear string      `json:"financial_year"`
	Final         bool        `json:"final"`
	Employees     int64       `json:"employees"` // all employees over the six levels
	Disabled      int64       `json:"disabled"`  // employees with disabilities over the six levels
	Levels        []LevelYear `json:"levels"`
	Counts        Counts      `json:"-"`
	fy            pipeline.FinancialYear
}

// LevelYear is one level in one year: its headcount, its designated
// groups and how many people have changed group there since the profile.
type LevelYear struct {
	Level               string  `json:"level"`
	Headcount           int64   `json:"headcount"`
	DesignatedMale      int64   `json:"designated_male"`
	DesignatedFemale    int64   `json:"designated_female"`
	DesignatedMalePct   float64 `json:"designated_male_pct"`
	DesignatedFemalePct float64 `json:"designated_female_pct"`
	Moves               int64   `json:"moves"`
}

// Plan works out the plan from the profile's counts.
func Plan(profile Counts, opts Options) (*Result, error) {
	if len(opts.Years) == 0 {
		return nil, errors.New("the plan has no financial year")
	}
	if opts.Targets == nil {
		opts.Targets = sector.DefaultSectorTargets()
	}
	if !opts.Targets.HasSector(opts.Sector) {
		return nil, fmt.Errorf("the sector %q has no targets", opts.Sector)
	}
	if opts.Growth < 0 || math.IsNaN(opts.Growth) || opts.Growth > 100 {
		return nil, fmt.Errorf("growth %v%%: give a percentage a year from 0 to 100", opts.Growth)
	}
	profile.total()
	if err := profile.disabledWithin(); err != nil {
		return nil, err
	}
	if profile.sixLevels(all) == 0 {
		return nil, errors.New("the profile has no employees at the six occupational levels: there is nothing to plan")
	}
	b := &builder{opts: opts, start: profile, cur: profile}
	b.grow()
	for l := range sector.SectorLevels {
		b.level(l)
	}
	b.disability()
	return b.result(), nil
}

// builder applies the plan's changes to cur, one unit at a time, keeping
// each unit for the schedule of the years.
type builder struct {
	opts       Options
	start, cur Counts
	units      []unit
	shortfalls []Shortfall
}

// unit is one indivisible change: a person who joins (growth), changes
// group (a move, with the disabled counter that moves with them), or is
// counted as having a disability.
type unit struct {
	level   int
	move    bool
	changes []change
}

type change struct {
	t, r, g, l int
	d          int64
}

// apply adds d to a cell of cur and records it on u.
func (b *builder) apply(u *unit, t, r, g, l int, d int64) {
	b.cur[t][r][g][l] += d
	u.changes = append(u.changes, change{t, r, g, l, d})
}

// grow adds each level's growth (and the temporary row's), spread over
// its cells in proportion to their counts.
func (b *builder) grow() {
	if b.opts.Growth == 0 {
		return
	}
	factor := math.Pow(1+b.opts.Growth/100, float64(len(b.opts.Years)))
	for _, l := range []int{0, 1, 2, 3, 4, 5, levelTemporary} {
		h := b.cur.head(l)
		add := int64(math.Round(float64(h)*factor)) - h
		cells, weights := b.cells(l, everyone)
		for i, n := range apportion(add, weights) {
			for k := int64(0); k < n; k++ {
				u := unit{level: l}
				b.apply(&u, all, cells[i].r, cells[i].g, l, 1)
				b.units = append(b.units, u)
			}
		}
	}
	b.cur.total()
}

type cell struct{ r, g int }

var (
	everyone      = []cell{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}, {4, 0}, {4, 1}}
	nonDesignated = []cell{{white, male}, {foreign, male}, {foreign, female}}
)

func designatedCells(g int) []cell {
	var out []cell
	for _, r := range designatedRaces(g) {
		out = append(out, cell{r, g})
	}
	return out
}

// cells returns the cells and their all-employees counts at a level.
func (b *builder) cells(l int, of []cell) ([]cell, []int64) {
	w := make([]int64, len(of))
	for i, c := range of {
		w[i] = b.cur[all][c.r][c.g][l]
	}
	return of, w
}

// level moves the fewest people at a level with sector targets: exactly
// max(0, needMale-designatedMale) + max(0, needFemale-designatedFemale).
func (b *builder) level(l int) {
	h := b.cur.head(l)
	tm, tf, ok := b.opts.Targets.LevelTarget(b.opts.Sector, pipeline.Levels[l])
	if h == 0 || !ok {
		return
	}
	needM, needF := sector.SectorNeed(tm, h), sector.SectorNeed(tf, h)
	dm, df := b.cur.designated(male, l), b.cur.designated(female, l)
	if needM+needF > h {
		wantM, wantF := needM, needF
		needM = max(dm, min(needM, h-df))
		needF = max(df, min(needF, h-needM))
		b.shortfalls = append(b.shortfalls, Shortfall{Level: pipeline.Levels[l], Target: "designated_male and designated_female",
			Reason: fmt.Sprintf("at a headcount of %d the targets (%s%% designated men, %s%% designated women) need %d designated men and %d designated women together, more than the %d people there; %s",
				h, tm, tf, wantM, wantF, h, nearest(wantM, wantF, needM, needF))})
	}
	movesM, movesF := max(0, needM-dm), max(0, needF-df)
	if movesM+movesF == 0 {
		return
	}
	_, nw := b.cells(l, nonDesignated)
	var n int64
	for _, w := range nw {
		n += w
	}
	src := spread(nonDesignated, apportion(min(movesM+movesF, n), nw))
	var srcM, srcF []cell
	switch {
	case movesM+movesF <= n:
		srcM, srcF = src[:movesM], src[movesM:]
	case movesM > 0: // the women's surplus makes up the rest (movesF is 0)
		_, fw := b.cells(l, designatedCells(female))
		srcM = append(src, spread(designatedCells(female), apportion(movesM-n, fw))...)
	default:
		_, mw := b.cells(l, designatedCells(male))
		srcF = append(src, spread(designatedCells(male), apportion(movesF-n, mw))...)
	}
	sinkM := spread(designatedCells(male), apportion(movesM, b.weights(male, l)))
	sinkF := spread(designatedCells(female), apportion(movesF, b.weights(female, l)))
	// In turn, so that the earlier years move both groups along.
	for i := 0; i < len(sinkM) || i < len(sinkF); i++ {
		if i < len(sinkM) {
			b.transfer(l, srcM[i], sinkM[i])
		}
		if i < len(sinkF) {
			b.transfer(l, srcF[i], sinkF[i])
		}
	}
	b.cur.total()
}

// nearest says what the plan does at a level whose two figures need more
// people than it has: which figure its needM designated men and needF
// designated women meet (the designated people already there stay).
func nearest(wantM, wantF, needM, needF int64) string {
	switch {
	case needM >= wantM:
		return fmt.Sprintf("the plan meets the men's figure and comes as near the women's as the headcount allows (%d designated women)", needF)
	case needF >= wantF:
		return fmt.Sprintf("the plan meets the women's figure with the designated women already there (moving none) and comes as near the men's as the headcount allows (%d designated men)", needM)
	}
	return fmt.Sprintf("the plan comes as near both figures as the headcount allows (%d designated men, %d designated women)", needM, needF)
}

// spread lists each cell as often as its share, the cells taking turns,
// so that the earlier years draw on every cell.
func spread(cells []cell, shares []int64) []cell {
	var out []cell
	left := append([]int64(nil), shares...)
	for more := true; more; {
		more = false
		for i, c := range cells {
			if left[i] > 0 {
				out = append(out, c)
				left[i]--
				more = more || left[i] > 0
			}
		}
	}
	return out
}

// weights are the shares of a designated group's races for the people who
// join it at a level (Options.Weights, else DefaultRule).
func (b *builder) weights(g, l int) []int64 {
	cells := designatedCells(g)
	w := make([]int64, len(cells))
	if b.opts.Weights != nil {
		for i, c := range cells {
			w[i] = b.opts.Weights[pipeline.Races[c.r]]
		}
		return w
	}
	var sum int64
	for i, c := range cells {
		w[i] = b.start[all][c.r][c.g][l]
		sum += w[i]
	}
	if sum > 0 {
		return w
	}
	for i, c := range cells {
		w[i] = b.start[all][c.r][c.g][levelTotalPermanent]
	}
	return w
}

// transfer moves one person at a level from one group's cell to another's:
// when the cell left behind then has more people with disabilities than
// people, one of them moves too.
func (b *builder) transfer(l int, from, to cell) {
	u := unit{level: l, move: true}
	b.apply(&u, all, from.r, from.g, l, -1)
	b.apply(&u, all, to.r, to.g, l, 1)
	if b.cur[disabled][from.r][from.g][l] > b.cur[all][from.r][from.g][l] {
		b.apply(&u, disabled, from.r, from.g, l, -1)
		b.apply(&u, disabled, to.r, to.g, l, 1)
	}
	b.units = append(b.units, u)
}

// disability adds people with disabilities until they are 3% of the
// employees of the six levels, in cells that have room in every year
// (the fewer of the cell's people in the profile and in the final year,
// less those already counted), in proportion to that room.
func (b *builder) disability() {
	b.cur.total()
	e, d := b.cur.sixLevels(all), b.cur.sixLevels(disabled)
	need := sector.SectorNeed(sector.DisabilityTarget, e)
	if e == 0 || d >= need {
		return
	}
	type place struct{ r, g, l int }
	var places []place
	var room []int64
	var total int64
	for l := 0; l < occupationalLevels; l++ {
		for _, c := range everyone {
			free := min(b.start[all][c.r][c.g][l], b.cur[all][c.r][c.g][l]) - b.cur[disabled][c.r][c.g][l]
			places = append(places, place{c.r, c.g, l})
			room = append(room, max(0, free))
			total += max(0, free)
		}
	}
	add := need - d
	if add > total {
		b.shortfalls = append(b.shortfalls, Shortfall{Level: "all", Target: "disabled",
			Reason: fmt.Sprintf("%d more people with disabilities are needed to reach 3%% of %d employees, but only %d employees are not yet counted as having one in every year", add, e, total)})
		add = total
	}
	for i, n := range apportion(add, room) {
		for k := int64(0); k < n; k++ {
			u := unit{level: places[i].l}
			b.apply(&u, disabled, places[i].r, places[i].g, places[i].l, 1)
			b.units = append(b.units, u)
		}
	}
	b.cur.total()
}
