package propose

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
)

// genCounts draws a profile: every cell of the six levels and the
// temporary row, with disabled counts at most the cell's.
func genCounts(t *rapid.T) Counts {
	var c Counts
	big := rapid.IntRange(0, 25).Draw(t, "scale")
	for r := 0; r < 5; r++ {
		for g := 0; g < 2; g++ {
			for _, l := range []int{0, 1, 2, 3, 4, 5, levelTemporary} {
				v := int64(rapid.IntRange(0, big).Draw(t, "cell"))
				c[all][r][g][l] = v
				c[disabled][r][g][l] = int64(rapid.IntRange(0, int(v)).Draw(t, "dis")) / 4
			}
		}
	}
	c.total()
	return c
}

func fys(n int) []pipeline.FinancialYear {
	out := make([]pipeline.FinancialYear, n)
	for i := range out {
		out[i] = pipeline.FinancialYear(2026 + i)
	}
	return out
}

// TestPlanProperties: for random profiles and every sector, the final
// year meets every target by the sector check (when none is reported as
// unmeetable), each level moves exactly the minimal number of people, the
// disabled count is the larger of the profile's and 3%, the rows without
// targets keep their all-employees counters, and every counter of every
// year lies between its profile and final value, monotonic, with no
// disabled counter above its cell's all-employees counter.
func TestPlanProperties(t *testing.T) {
	targets := sector.DefaultSectorTargets()
	rapid.Check(t, func(t *rapid.T) {
		prof := genCounts(t)
		if prof.sixLevels(all) == 0 {
			if _, err := Plan(prof, Options{Sector: "Manufacturing", Years: fys(1)}); err == nil {
				t.Fatal("a profile with no employees gave a plan")
			}
			return
		}
		n := rapid.IntRange(1, 5).Draw(t, "years")
		opts := Options{Years: fys(n)}
		if rapid.IntRange(0, 3).Draw(t, "grow") == 0 {
			opts.Growth = float64(rapid.IntRange(1, 15).Draw(t, "growth"))
		}
		if rapid.Bool().Draw(t, "weights") {
			opts.Weights = map[string]int64{"african": int64(rapid.IntRange(1, 9).Draw(t, "wa")),
				"coloured": int64(rapid.IntRange(0, 3).Draw(t, "wc")), "white": int64(rapid.IntRange(0, 3).Draw(t, "ww"))}
		}
		for _, sec := range pipeline.Sectors {
			if !targets.HasSector(sec) {
				continue
			}
			opts.Sector = sec
			res, err := Plan(prof, opts)
			if err != nil {
				t.Fatal(err)
			}
			final := res.Years[n-1]
			if opts.Growth == 0 {
				checkFinal(t, prof, final, res, sec, targets)
			}
			checkSteps(t, prof, res)
			plan := res.InputPlan(pipeline.InputPlan{Name: "p", Sector: sec, StartDate: fys(n)[0].Start(), EndDate: fys(n)[n-1].End()})
			check := sector.CheckPlanSector(plan, nil, targets)
			if len(res.Shortfalls) == 0 && check.Status != sector.SectorMet {
				t.Fatalf("%s: final year status %s, want met: %+v", sec, check.Status, check.FinalYear())
			}
		}
	})
}

func checkFinal(t *rapid.T, prof Counts, final Year, res *Result, sec string, targets *sector.SectorTargets) {
	unmeetable := map[string]bool{}
	for _, s := range res.Shortfalls {
		unmeetable[s.Level] = true
	}
	for l := 0; l < 4; l++ {
		h := prof.head(l)
		tm, tf, _ := targets.LevelTarget(sec, pipeline.Levels[l])
		needM, needF := sector.SectorNeed(tm, h), sector.SectorNeed(tf, h)
		want := max(0, needM-prof.designated(male, l)) + max(0, needF-prof.designated(female, l))
		if got := final.Levels[l].Moves; !unmeetable[pipeline.Levels[l]] && got != want {
			t.Fatalf("%s: %d moves, want %d", pipeline.Levels[l], got, want)
		}
		if final.Counts.head(l) != h {
			t.Fatalf("%s: headcount %d, profile %d", pipeline.Levels[l], final.Counts.head(l), h)
		}
	}
	for r := 0; r < 5; r++ {
		for g := 0; g < 2; g++ {
			for _, l := range []int{4, 5, levelTemporary} {
				if final.Counts[all][r][g][l] != prof[all][r][g][l] {
					t.Fatalf("level %d changed", l)
				}
			}
		}
	}
	e := prof.sixLevels(all)
	wantDis := max(prof.sixLevels(disabled), sector.SectorNeed(sector.DisabilityTarget, e))
	if e > 0 && !unmeetable["all"] && final.Counts.sixLevels(disabled) != wantDis {
		t.Fatalf("disabled %d, want %d", final.Counts.sixLevels(disabled), wantDis)
	}
}

func checkSteps(t *rapid.T, prof Counts, res *Result) {
	final := res.Years[len(res.Years)-1].Counts
	prev := prof
	for _, y := range res.Years {
		for tt := 0; tt < 2; tt++ {
			for r := 0; r < 5; r++ {
				for g := 0; g < 2; g++ {
					for l := 0; l < 9; l++ {
						p, f, v, before := prof[tt][r][g][l], final[tt][r][g][l], y.Counts[tt][r][g][l], prev[tt][r][g][l]
						if v < min(p, f) || v > max(p, f) {
							t.Fatalf("year %d counter %d/%d/%d/%d = %d, not between %d and %d", y.YearNumber, tt, r, g, l, v, p, f)
						}
						if (f >= p && v < before) || (f < p && v > before) {
							t.Fatalf("year %d counter %d/%d/%d/%d = %d after %d: not monotonic", y.YearNumber, tt, r, g, l, v, before)
						}
						if tt == disabled && v > y.Counts[all][r][g][l] {
							t.Fatalf("year %d: disabled %d above all %d", y.YearNumber, v, y.Counts[all][r][g][l])
						}
					}
				}
			}
		}
		prev = y.Counts
	}
}

func TestApportion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.SliceOfN(rapid.Int64Range(0, 50), 1, 8).Draw(t, "w")
		var sum int64
		for _, x := range w {
			sum += x
		}
		n := rapid.Int64Range(0, max(sum, 1)).Draw(t, "n")
		out := apportion(n, w)
		var got int64
		for i, x := range out {
			got += x
			if sum > 0 && n <= sum && x > w[i] {
				t.Fatalf("place %d gets %d > weight %d", i, x, w[i])
			}
		}
		if got != n {
			t.Fatalf("gave %d of %d", got, n)
		}
	})
}

// TestShortfallSaysWhatThePlanDoes: a level of one designated woman where
// the two figures need two people keeps her (no move), and the shortfall
// says that the women's figure is met and the men's is not, never that the
// plan meets the men's figure.
func TestShortfallSaysWhatThePlanDoes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r, g      int
		dm, df    int64
		want, not string
	}{
		{"a designated woman", african, female, 0, 1, "meets the women's figure", "meets the men's figure"},
		{"a white man", white, male, 1, 0, "meets the men's figure", "meets the women's figure"},
	} {
		var prof Counts
		prof[all][tc.r][tc.g][1] = 1 // senior management, headcount 1
		prof[all][african][male][5] = 3
		res, err := Plan(prof, Options{Sector: "Transport and Storage", Years: fys(1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Shortfalls) != 1 || res.Shortfalls[0].Level != "senior_managers" {
			t.Fatalf("%s: shortfalls %+v, want one at senior_managers", tc.name, res.Shortfalls)
		}
		ly := res.Years[0].Levels[1]
		if ly.DesignatedMale != tc.dm || ly.DesignatedFemale != tc.df {
			t.Fatalf("%s: senior management %+v, want %d designated men and %d designated women", tc.name, ly, tc.dm, tc.df)
		}
		why := res.Shortfalls[0].Reason
		if !strings.Contains(why, tc.want) || strings.Contains(why, tc.not) {
			t.Errorf("%s: reason %q, want it to say %q and not %q", tc.name, why, tc.want, tc.not)
		}
	}
}

// TestPlanRefusesDisabledAboveAll: a profile with more people with
// disabilities in a cell than employees is refused, where the plan would
// keep a disabled counter above its cell's all-employees counter.
func TestPlanRefusesDisabledAboveAll(t *testing.T) {
	var prof Counts
	prof[all][african][male][5] = 1
	prof[disabled][african][male][5] = 5
	prof[all][african][female][0] = 2
	res, err := Plan(prof, Options{Sector: "Manufacturing", Years: fys(2)})
	if err == nil {
		t.Fatalf("a profile with 5 people with disabilities among 1 employee gave a plan: %+v", res.Years[len(res.Years)-1])
	}
	if want := "number_of_african_male_unskilled_employees"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}
