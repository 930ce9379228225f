package sector

import "github.com/eepipe/eepipe/pipeline/pipelinetest"

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"pgregory.net/rapid"
)

// fullCounters returns every default-catalog counter set to zero, then the
// given counters: keys are "race_gender_level" without the number_of_ prefix.
func fullCounters(set map[string]int64) map[string]int64 {
	m := map[string]int64{}
	for _, n := range pipeline.DefaultCatalog().Names() {
		m[n] = 0
	}
	for k, v := range set {
		n := pipeline.CounterPrefix + k
		if !pipeline.DefaultCatalog().Has(n) {
			panic("unknown counter " + n)
		}
		m[n] = v
	}
	return m
}

// onePlan is a one-year plan (2025/26) in sector with the given counters.
func onePlan(sector string, all, disabled map[string]int64) *pipeline.InputPlan {
	return &pipeline.InputPlan{
		Name: "P", Sector: sector,
		StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2026-08-31"),
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(all)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(disabled)},
		},
	}
}

func levelOf(t *testing.T, c SectorPlanCheck, year int, level string) SectorLevelCheck {
	t.Helper()
	for _, y := range c.Years {
		if y.YearNumber != year {
			continue
		}
		for _, l := range y.Levels {
			if l.Level == level {
				return l
			}
		}
	}
	t.Fatalf("no level %s in year %d of %+v", level, year, c)
	return SectorLevelCheck{}
}

func mustTargets(t *testing.T, csv string) *SectorTargets {
	t.Helper()
	st, err := parseSectorTargets(strings.NewReader(csv), "test.csv")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEmbeddedSectorTargetsMatchSharedData(t *testing.T) {
	shared, err := os.ReadFile("../../shared/data/sector-targets-2025.csv")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("shared data not present")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, embeddedSectorTargets) {
		t.Fatal("pipeline/sector-targets-2025.csv differs from shared/data/sector-targets-2025.csv: copy it again")
	}
}

func TestDefaultSectorTargets(t *testing.T) {
	st := DefaultSectorTargets()
	if got := len(st.rows); got != 72 {
		t.Fatalf("rows = %d, want 18 sectors x 4 levels", got)
	}
	for _, s := range pipeline.Sectors {
		for _, l := range SectorLevels {
			if _, ok := st.lookup(s, l); !ok {
				t.Errorf("no target for %s at %s", s, l)
			}
		}
	}
	got, _ := st.lookup("Manufacturing", "junior_managers")
	if got.Male != 4980 || got.Female != 3960 {
		t.Fatalf("Manufacturing junior = %+v", got)
	}
	if st.sourceName() != EmbeddedSectorTargetsSource {
		t.Fatal(st.sourceName())
	}
}

func TestParsePct(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Pct
		err  string
	}{
		{"18.6", 1860, ""}, {"3", 300, ""}, {" 49.80 ", 4980, ""}, {"18,6", 1860, ""}, {"7 %", 700, ""},
		{".5", 50, ""}, {"100", 10000, ""}, {"0", 0, ""}, {"12.345", 0, "more than two decimals"},
		{"12.340", 1234, ""}, {"-1", 0, "negative"}, {"abc", 0, "not a percentage"}, {"", 0, "blank"},
		{"100.01", 0, "more than 100"}, {"1000", 0, "more than 100"}, {"1e2", 0, "not a percentage"}, {".", 0, "not a percentage"},
	} {
		got, err := parsePct(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parsePct(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parsePct(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if s := Pct(4985).String(); s != "49.85" {
		t.Fatal(s)
	}
	if s := Pct(1860).String(); s != "18.6" {
		t.Fatal(s)
	}
	if s := Pct(300).String(); s != "3" {
		t.Fatal(s)
	}
}

func TestParseSectorTargetsErrors(t *testing.T) {
	const head = "sector,level,designated_male_pct,designated_female_pct\n"
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"unknown sector", head + "Manufactring,top_managers,24.1,25\n", []string{"line 2, column 1 (sector)", `"Manufactring" is not a sector`, `did you mean "Manufacturing"`}},
		{"unknown level", head + "Manufacturing,top_manager,24.1,25\n", []string{"line 2, column 2 (level)", `did you mean "top_managers"`}},
		{"no target level", head + "Manufacturing,unskilled_employees,24.1,25\n", []string{"has no sector target"}},
		{"bad percentage", head + "Manufacturing,top_managers,24.1x,25\n", []string{"line 2, column 3 (designated_male_pct)", "not a percentage"}},
		{"blank percentage", head + "Manufacturing,top_managers,24.1,\n", []string{"column 4 (designated_female_pct)", "blank"}},
		{"missing column", "sector,level,designated_male_pct\nManufacturing,top_managers,24.1\n", []string{"no designated_female_pct column"}},
		{"duplicate", head + "Manufacturing,top_managers,24.1,25\nmanufacturing,Top management,24.1,25\n", []string{"line 3", "already given on line 2"}},
		{"over 100", head + "Manufacturing,top_managers,60,50\n", []string{"line 2", "110%"}},
		{"empty", "", []string{"empty"}},
		{"no rows", head, []string{"no targets"}},
		{"bad quoting", head + "\"Manufacturing,top_managers,24.1,25\n", []string{"line 2"}},
		{"every problem", head + "X,top_managers,1,1\nManufacturing,Y,1,1\n", []string{"2 problems", "line 2", "line 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSectorTargets(strings.NewReader(tc.in), "my-targets.csv")
			if err == nil {
				t.Fatal("no error")
			}
			var te *sectorTargetsError
			if !errors.As(err, &te) {
				t.Fatalf("error %T %v", err, err)
			}
			for _, w := range append(tc.want, "my-targets.csv") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseSectorTargetsVariants(t *testing.T) {
	in := "\ufeff# corrected from the gazette\n" +
		"Level;Sector;Designated_Female_Pct;Designated_Male_Pct;Comment\n" +
		"Top management;transportation and storage;30,0;32,2;checked\n" +
		"\"Skilled technical and academically qualified workers, junior management, supervisors, foremen and superintendents\";Transport and Storage;41.4%;49.8;\n"
	st := mustTargets(t, in)
	got := st.rows
	want := []sectorTarget{
		{Sector: "Transport and Storage", Level: "top_managers", Male: 3220, Female: 3000, line: 3},
		{Sector: "Transport and Storage", Level: "junior_managers", Male: 4980, Female: 4140, line: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows = %+v\nwant %+v", got, want)
	}
	if st.hasSector("Manufacturing") || !st.hasSector("Transport and Storage") {
		t.Fatal("HasSector")
	}
}

func TestSectorTargetsRoundTrip(t *testing.T) {
	st := DefaultSectorTargets()
	var b bytes.Buffer
	if err := writeTargetsCSV(st, &b); err != nil {
		t.Fatal(err)
	}
	again, err := parseSectorTargets(&b, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stripLines(st.rows), stripLines(again.rows)) {
		t.Fatal("round trip changed the targets")
	}
}

// writeTargetsCSV writes st in the file format parseSectorTargets reads,
// for the round trips.
func writeTargetsCSV(st *SectorTargets, w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{colSector, colLevel, colMale, colFemale})
	for _, r := range st.rows {
		_ = cw.Write([]string{r.Sector, r.Level, r.Male.String(), r.Female.String()})
	}
	cw.Flush()
	return cw.Error()
}

func stripLines(rows []sectorTarget) []sectorTarget {
	out := append([]sectorTarget(nil), rows...)
	for i := range out {
		out[i].line = 0
	}
	return out
}

func FuzzParseSectorTargets(f *testing.F) {
	f.Add(string(embeddedSectorTargets[:400]))
	f.Add("sector;level;designated_male_pct;designated_female_pct\nConstruction;Top management;30,0;24,8\n")
	f.Add("sector,level,designated_male_pct,designated_female_pct\n\"Agriculture, Forestry & Fishing\",top_managers,13.2,20.8\n")
	f.Add("sector,level\n")
	f.Add("\"unterminated\n")
	f.Fuzz(func(t *testing.T, in string) {
		st, err := parseSectorTargets(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			var te *sectorTargetsError
			if !errors.As(err, &te) || len(te.problems) == 0 {
				t.Fatalf("error without problems: %v", err)
			}
			return
		}
		for _, r := range st.rows {
			if !pipeline.Contains(pipeline.Sectors, r.Sector) || !pipeline.Contains(SectorLevels, r.Level) || r.Male < 0 || r.Female < 0 || r.Male+r.Female > 10000 {
				t.Fatalf("invalid row accepted: %+v", r)
			}
		}
		var b bytes.Buffer
		if err := writeTargetsCSV(st, &b); err != nil {
			t.Fatal(err)
		}
		again, err := parseSectorTargets(&b, "again.csv")
		if err != nil {
			t.Fatalf("written targets do not parse: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(stripLines(st.rows), stripLines(again.rows)) {
			t.Fatal("round trip changed the targets")
		}
	})
}

func TestMeasureShareExact(t *testing.T) {
	for _, tc := range []struct {
		count, of    int64
		target       Pct
		met          bool
		needed, shrt int64
	}{
		{498, 1000, 4980, true, 498, 0},                       // exactly at the target
		{497, 1000, 4980, false, 498, 1},                      // one person short
		{7, 100, 700, true, 7, 0},                             // 0.07*100 is 7.000000000000001 in floating point
		{14, 100, 1400, true, 14, 0},                          // 0.14*100 is 14.000000000000002
		{56, 100, 5700, false, 57, 1},                         // 0.57*100 is 56.99999999999999
		{3, 10, 2410, true, 3, 0},                             // 2.41 people round up to 3
		{2, 10, 2410, false, 3, 1},                            //
		{0, 1, 1320, false, 1, 1},                             // a level of one
		{0, 5, 0, true, 0, 0},                                 // a zero target is always met
		{1, 3, 3333, true, 1, 0},                              // 33.33% of 3 is 0.9999
		{0, 1 << 40, 4980, false, 547556790633, 547556790633}, // 2^40 * 0.498 = 547556790632.4,
	} {
		r := measureShare(tc.count, tc.of, tc.target)
		if r.Met != tc.met || r.Needed != tc.needed || r.ShortPeople != tc.shrt {
			t.Errorf("measureShare(%d, %d, %s) = met %v needed %d short %d; want %v %d %d",
				tc.count, tc.of, tc.target, r.Met, r.Needed, r.ShortPeople, tc.met, tc.needed, tc.shrt)
		}
		if !r.Met && r.ShortPoints <= 0 {
			t.Errorf("short with %v points", r.ShortPoints)
		}
	}
	r := measureShare(497, 1000, 4980)
	if r.ShortPoints < 0.0999 || r.ShortPoints > 0.1001 || r.ActualPct != 49.7 {
		t.Fatalf("%+v", r)
	}
}

func TestCheckPlanSectorLevels(t *testing.T) {
	targets := DefaultSectorTargets()
	// Education: top 27.6/46.1, senior 30.5/46.1, middle 43.0/46.1, junior 49.8/46.1.
	type want struct {
		level        string
		status       SectorStatus
		head         int64
		male, female int64
		shortM       int64
		shortF       int64
		reason       string
	}
	for _, tc := range []struct {
		name string
		all  map[string]int64
		want want
	}{
		{"exactly at the target", map[string]int64{
			"african_male_junior_managers": 400, "indian_male_junior_managers": 98, "coloured_female_junior_managers": 461, "white_male_junior_managers": 41,
		}, want{"junior_managers", SectorMet, 1000, 498, 461, 0, 0, ""}},
		{"one person short", map[string]int64{
			"african_male_junior_managers": 497, "african_female_junior_managers": 461, "white_male_junior_managers": 42,
		}, want{"junior_managers", SectorShort, 1000, 497, 461, 1, 0, ""}},
		{"foreign nationals count in the headcount but are not designated", map[string]int64{
			// 10 top managers: 3 African men, 5 African women, 1 foreign man, 1 foreign woman.
			// Male 30% >= 27.6% (needs 3); female 50% >= 46.1% (needs 5).
			"african_male_top_managers": 3, "african_female_top_managers": 5, "foreign_male_top_managers": 1, "foreign_female_top_managers": 1,
		}, want{"top_managers", SectorMet, 10, 3, 5, 0, 0, ""}},
		{"foreign nationals make a level short", map[string]int64{
			// 10 top managers: 2 African men, 4 African women, 4 foreign: male 20% (needs 3), female 40% (needs 5).
			"african_male_top_managers": 2, "african_female_top_managers": 4, "foreign_male_top_managers": 2, "foreign_female_top_managers": 2,
		}, want{"top_managers", SectorShort, 10, 2, 4, 1, 1, ""}},
		{"white women are designated, white men are not", map[string]int64{
			// 20 senior managers: 6 Coloured men (30% < 30.5%: needs 7), 10 white women (50%), 4 white men.
			"coloured_male_senior_managers": 6, "white_female_senior_managers": 10, "white_male_senior_managers": 4,
		}, want{"senior_managers", SectorShort, 20, 6, 10, 1, 0, ""}},
		{"no employees at a level", map[string]int64{"african_male_top_managers": 1},
			want{"middle_managers", SectorNotAssessable, 0, 0, 0, 0, 0, "no employees at this level"}},
		{"summary counters are not added", map[string]int64{
			"african_male_middle_managers": 43, "indian_female_middle_managers": 47, "white_male_middle_managers": 10,
			"african_male_total_permanent_employees": 500, "white_male_grand_total_employees": 900, "white_male_temporary_employees": 50,
		}, want{"middle_managers", SectorMet, 100, 43, 47, 0, 0, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CheckPlanSector(onePlan("Education", fullCounters(tc.all), fullCounters(nil)), nil, targets)
			l := levelOf(t, c, 1, tc.want.level)
			if l.Status != tc.want.status {
				t.Fatalf("status %s (%s), want %s", l.Status, l.Reason, tc.want.status)
			}
			if tc.want.reason != "" {
				if !strings.Contains(l.Reason, tc.want.reason) {
					t.Fatalf("reason %q", l.Reason)
				}
				if l.Male != nil || l.Female != nil {
					t.Fatal("figures given for a level not assessable")
				}
				return
			}
			if l.Headcount == nil || *l.Headcount != tc.want.head {
				t.Fatalf("headcount %v, want %d", l.Headcount, tc.want.head)
			}
			if l.Male.Count != tc.want.male || l.Female.Count != tc.want.female {
				t.Fatalf("designated male %d female %d, want %d %d", l.Male.Count, l.Female.Count, tc.want.male, tc.want.female)
			}
			if l.Male.ShortPeople != tc.want.shortM || l.Female.ShortPeople != tc.want.shortF {
				t.Fatalf("short male %d female %d, want %d %d", l.Male.ShortPeople, l.Female.ShortPeople, tc.want.shortM, tc.want.shortF)
			}
		})
	}
}

func TestCheckPlanSectorNotAssessable(t *testing.T) {
	targets := DefaultSectorTargets()
	all := fullCounters(map[string]int64{"african_male_top_managers": 5, "white_female_top_managers": 5})

	c := CheckPlanSector(onePlan("", all, fullCounters(nil)), nil, targets)
	if c.Status != SectorNotAssessable || !strings.Contains(c.Reason, "no sector") || len(c.Years) != 0 {
		t.Fatalf("no sector: %+v", c)
	}

	only := mustTargets(t, "sector,level,designated_male_pct,designated_female_pct\nConstruction,top_managers,30,24.8\n")
	c = CheckPlanSector(onePlan("Education", all, fullCounters(nil)), nil, only)
	if c.Status != SectorNotAssessable || !strings.Contains(c.Reason, `"Education" has no targets in test.csv`) {
		t.Fatalf("sector not in file: %+v", c)
	}
	c = CheckPlanSector(onePlan("Construction", all, fullCounters(nil)), nil, only)
	if l := levelOf(t, c, 1, "senior_managers"); l.Status != SectorNotAssessable || !strings.Contains(l.Reason, "no target") {
		t.Fatalf("level without target: %+v", l)
	}
	if l := levelOf(t, c, 1, "top_managers"); l.Status != SectorMet {
		t.Fatalf("top: %+v", l)
	}

	// Blank counters (absent from the file) are unknown.
	blank := fullCounters(map[string]int64{"african_male_top_managers": 5})
	delete(blank, "number_of_white_female_top_managers")
	c = CheckPlanSector(onePlan("Education", blank, fullCounters(nil)), nil, targets)
	l := levelOf(t, c, 1, "top_managers")
	if l.Status != SectorNotAssessable || !strings.Contains(l.Reason, "blank") || !strings.Contains(l.Reason, "number_of_white_female_top_managers") || l.Headcount != nil {
		t.Fatalf("blank: %+v", l)
	}
	if l := levelOf(t, c, 1, "senior_managers"); l.Status != SectorNotAssessable || l.Reason != "no employees at this level" {
		t.Fatalf("other level: %+v", l)
	}
	if d := c.Years[0].Disability; d.Status != SectorNotAssessable || !strings.Contains(d.Reason, "all_employees counters left blank") {
		t.Fatalf("disability with a blank: %+v", d)
	}

	// A catalog without a level's counters.
	var names []string
	for _, n := range pipeline.DefaultCatalog().Names() {
		if !strings.HasSuffix(n, "_middle_managers") {
			names = append(names, n)
		}
	}
	cat, err := pipeline.NewCatalog(names)
	if err != nil {
		t.Fatal(err)
	}
	c = CheckPlanSector(onePlan("Education", all, fullCounters(nil)), cat, targets)
	if l := levelOf(t, c, 1, "middle_managers"); l.Status != SectorNotAssessable || !strings.Contains(l.Reason, "counter catalog has no number_of_african_male_middle_managers") {
		t.Fatalf("catalog: %+v", l)
	}
}

func TestCheckPlanSectorDisability(t *testing.T) {
	targets := DefaultSectorTargets()
	// 100 employees over the six levels (summary counters hold noise that must not count).
	all := fullCounters(map[string]int64{
		"african_male_top_managers": 10, "african_female_senior_managers": 20, "white_male_middle_managers": 20,
		"indian_female_junior_managers": 20, "coloured_male_semi_skilled_employees": 20, "foreign_female_unskilled_employees": 10,
		"african_male_grand_total_employees": 100, "african_male_total_permanent_employees": 100, "white_female_temporary_employees": 7,
	})
	for _, tc := range []struct {
		name     string
		disabled map[string]int64
		status   SectorStatus
		short    int64
	}{
		{"3% met", map[string]int64{"african_male_top_managers": 1, "foreign_female_unskilled_employees": 2}, SectorMet, 0},
		{"3% missed", map[string]int64{"african_male_top_managers": 2, "african_male_grand_total_employees": 5, "white_female_temporary_employees": 3}, SectorShort, 1},
		{"none", nil, SectorShort, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CheckPlanSector(onePlan("Education", all, fullCounters(tc.disabled)), nil, targets)
			d := c.Years[0].Disability
			if d.Status != tc.status || d.Share == nil || d.Share.Of != 100 || d.Share.ShortPeople != tc.short {
				t.Fatalf("%+v %+v", d, d.Share)
			}
		})
	}
	c := CheckPlanSector(onePlan("Education", all, nil), nil, targets)
	if d := c.Years[0].Disability; d.Status != SectorNotAssessable || !strings.Contains(d.Reason, "no disabled_employees figures") {
		t.Fatalf("%+v", d)
	}
}

func TestCheckPlanSectorFinalYear(t *testing.T) {
	targets := DefaultSectorTargets()
	short := fullCounters(map[string]int64{"african_male_top_managers": 1, "white_male_top_managers": 9})
	met := fullCounters(map[string]int64{
		"african_male_top_managers": 3, "african_female_top_managers": 5, "white_male_top_managers": 2,
		"african_male_semi_skilled_employees": 100,
	})
	dis := fullCounters(map[string]int64{"african_male_semi_skilled_employees": 4})
	p := &pipeline.InputPlan{
		Name: "Three years", Sector: "Education",
		StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2031-08-31"), // clamped to 2030-08-31: 5 years
		Targets: []*pipeline.InputTarget{
			{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(short)},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)},
			{FinancialYear: 2029, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(met)},
			{FinancialYear: 2029, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)},
		},
	}
	c := CheckPlanSector(p, nil, targets)
	if len(c.Years) != 5 {
		t.Fatalf("years %d", len(c.Years))
	}
	fin := c.FinalYear()
	if fin == nil || fin.YearNumber != 5 || fin.FinancialYear != 2029 || !fin.Final {
		t.Fatalf("final %+v", fin)
	}
	if c.Status != SectorMet {
		t.Fatalf("plan status %s; final %+v", c.Status, fin)
	}
	if levelOf(t, c, 1, "top_managers").Status != SectorShort {
		t.Fatal("year 1 should be short")
	}
	if l := levelOf(t, c, 3, "top_managers"); l.Status != SectorNotAssessable || !strings.Contains(l.Reason, "no all_employees figures") {
		t.Fatalf("year 3 %+v", l)
	}
	// The final year decides.
	p.Targets[2].Counters = pipeline.CountersOf(short)
	if c := CheckPlanSector(p, nil, targets); c.Status != SectorShort {
		t.Fatalf("plan status %s", c.Status)
	}
	r := NewSectorCheckReport(targets, []SectorPlanCheck{CheckPlanSector(p, nil, targets)})
	if r.Summary() != (SectorSummary{Plans: 1, Short: 1}) {
		t.Fatalf("%+v", r.Summary())
	}
	if r.Notice != SectorNotice || !strings.Contains(r.Caveat, "checked against the gazette") || r.TargetsSource != EmbeddedSectorTargetsSource {
		t.Fatalf("notice %q, caveat %q, source %q", r.Notice, r.Caveat, r.TargetsSource)
	}
}

func TestCheckPlanSectorNoDates(t *testing.T) {
	p := &pipeline.InputPlan{PlanID: 9, Sector: "Education", Targets: []*pipeline.InputTarget{
		{FinancialYear: 2027, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(fullCounters(nil))},
		{FinancialYear: 2026, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(fullCounters(nil))},
	}}
	c := CheckPlanSector(p, nil, DefaultSectorTargets())
	if len(c.Years) != 2 || c.Years[0].FinancialYear != 2026 || !c.Years[1].Final || c.Years[1].FinancialYear != 2027 {
		t.Fatalf("%+v", c.Years)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "2027/28") {
		t.Fatalf("notes %v", c.Notes)
	}
}

func TestCheckPlanSectorInfeasibleNote(t *testing.T) {
	// One top manager in Education (27.6% / 46.1%) would need one designated man and one designated woman.
	all := fullCounters(map[string]int64{"african_male_top_managers": 1})
	l := levelOf(t, CheckPlanSector(onePlan("Education", all, fullCounters(nil)), nil, DefaultSectorTargets()), 1, "top_managers")
	if l.Status != SectorShort || !strings.Contains(l.Note, "cannot be met together") {
		t.Fatalf("%+v", l)
	}
}

func TestMatchAndFillFromServer(t *testing.T) {
	stored := []pipeline.Plan{
		{ID: 1, Name: "A", StartDate: pipelinetest.Day("2025-09-01")},
		{ID: 2, Name: "B", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2027-08-31"), Sector: "Education",
			Milestones: []pipeline.Milestone{
				{ID: 21, YearNumber: 1, StartDate: pipelinetest.Day("2025-09-01"), Targets: []pipeline.Target{
					{ID: 211, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(fullCounters(map[string]int64{"african_male_top_managers": 4}))},
					{ID: 212, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(fullCounters(nil))},
				}},
				{ID: 22, YearNumber: 2, StartDate: pipelinetest.Day("2026-09-01"), Targets: []pipeline.Target{
					{ID: 221, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(fullCounters(map[string]int64{"african_male_top_managers": 6}))},
					{ID: 222, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(fullCounters(nil))},
				}},
			}},
		{ID: 3, Name: "A", StartDate: pipelinetest.Day("2025-09-01")},
	}
	if got := pipeline.MatchStoredPlan(&pipeline.InputPlan{PlanID: 2}, stored); !reflect.DeepEqual(got, []int{1}) {
		t.Fatal(got)
	}
	if got := pipeline.MatchStoredPlan(&pipeline.InputPlan{Name: "B", StartDate: pipelinetest.Day("2025-09-01")}, stored); !reflect.DeepEqual(got, []int{1}) {
		t.Fatal(got)
	}
	if got := pipeline.MatchStoredPlan(&pipeline.InputPlan{Name: "A", StartDate: pipelinetest.Day("2025-09-01")}, stored); len(got) != 2 {
		t.Fatal(got)
	}
	if got := pipeline.MatchStoredPlan(&pipeline.InputPlan{Name: "B"}, stored); len(got) != 0 {
		t.Fatal(got)
	}

	file := &pipeline.InputPlan{PlanID: 2, Targets: []*pipeline.InputTarget{
		{FinancialYear: 2026, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{"number_of_white_female_top_managers": 6})},
	}}
	got := FillFromServer(file, &stored[1])
	if got.Sector != "Education" || got.StartDate != stored[1].StartDate || len(got.Targets) != 4 {
		t.Fatalf("%+v", got)
	}
	y2 := got.Targets[2]
	if y2.YearNumber != 2 || y2.Counters.Map()["number_of_white_female_top_managers"] != 6 || y2.Counters.Map()["number_of_african_male_top_managers"] != 6 {
		t.Fatalf("%+v", y2)
	}
	if stored[1].Milestones[1].Targets[0].Counters.Map()["number_of_white_female_top_managers"] != 0 {
		t.Fatal("stored plan modified")
	}
	c := CheckPlanSector(got, pipeline.CatalogOfStored(&stored[1]), DefaultSectorTargets())
	if l := levelOf(t, c, 2, "top_managers"); l.Status != SectorMet || *l.Headcount != 12 {
		t.Fatalf("%+v", l)
	}
}

func TestMeasureShareProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		of := rapid.Int64Range(1, 1_000_000).Draw(t, "of")
		count := rapid.Int64Range(0, of).Draw(t, "count")
		target := Pct(rapid.Int64Range(0, 10000).Draw(t, "target"))
		r := measureShare(count, of, target)
		// Needed is the smallest count whose share reaches the target, exactly.
		if r.Needed*10000 < int64(target)*of || (r.Needed > 0 && (r.Needed-1)*10000 >= int64(target)*of) {
			t.Fatalf("needed %d is not the smallest count reaching %s%% of %d", r.Needed, target, of)
		}
		if r.Met != (count*10000 >= int64(target)*of) {
			t.Fatalf("met %v for %d of %d against %s%%", r.Met, count, of, target)
		}
		if r.Met != (r.ShortPeople == 0) || (!r.Met && r.Count+r.ShortPeople != r.Needed) {
			t.Fatalf("short people %d inconsistent: %+v", r.ShortPeople, r)
		}
		if !r.Met && (r.ShortPoints <= 0 || r.ShortPoints > target.Float()+1e-9) {
			t.Fatalf("short points %v", r.ShortPoints)
		}
	})
}

func TestPctRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := Pct(rapid.Int64Range(0, 10000).Draw(t, "pct"))
		back, err := parsePct(p.String())
		if err != nil || back != p {
			t.Fatalf("parsePct(%q) = %d, %v; want %d", p.String(), back, err, p)
		}
	})
}

// TestShareResultJSONAlwaysHasGap checks that a met share still carries
// short_points and short_people (0), so readers of the JSON report find
// both figures on every assessed share.
func TestShareResultJSONAlwaysHasGap(t *testing.T) {
	for _, c := range []struct {
		count, of int64
		want      string
	}{
		{3, 10, `"short_points":0,"short_people":0,`},   // 30% of 10 against 30%: met exactly
		{7, 20, `"short_points":3.3,"short_people":1,`}, // 35% of 20 against 38.3%: one person short
	} {
		target := Pct(3000)
		if c.of == 20 {
			target = Pct(3830)
		}
		b, err := json.Marshal(measureShare(c.count, c.of, target))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%d of %d: %s lacks %s", c.count, c.of, b, c.want)
		}
	}
}

// TestSectorOutcomePartlyAssessed: a final year in which some figures could
// not be assessed is not "met", and a check in which nothing could be
// assessed is its own outcome: neither is a pass.
func TestSectorOutcomePartlyAssessed(t *testing.T) {
	targets := DefaultSectorTargets()
	met := fullCounters(map[string]int64{
		"african_male_top_managers": 3, "african_female_top_managers": 5, "white_male_top_managers": 2,
		"coloured_male_senior_managers": 7, "white_female_senior_managers": 10, "white_male_senior_managers": 3,
		"african_male_semi_skilled_employees": 100,
	})
	// Leave one middle and one junior management counter blank: with
	// employees at those levels, they and the disability share cannot be
	// assessed (3 of 5 final-year figures).
	met["number_of_african_male_middle_managers"] = 10
	met["number_of_african_male_junior_managers"] = 10
	delete(met, "number_of_white_male_middle_managers")
	delete(met, "number_of_white_male_junior_managers")
	dis := fullCounters(map[string]int64{"african_male_semi_skilled_employees": 4})
	p := &pipeline.InputPlan{Name: "Partly", Sector: "Education", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(met)}, {YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)}}}
	c := CheckPlanSector(p, nil, targets)
	if c.Status != SectorPartlyMet || c.Assessed != 2 || c.NotAssessed != 3 {
		t.Fatalf("status %s, assessed %d, not assessable %d; want met_where_assessable 2/3", c.Status, c.Assessed, c.NotAssessed)
	}
	r := NewSectorCheckReport(targets, []SectorPlanCheck{c})
	if r.Outcome() != SectorIncomplete || r.Summary() != (SectorSummary{Plans: 1, PartlyMet: 1}) {
		t.Fatalf("outcome %d summary %+v", r.Outcome(), r.Summary())
	}
	none := CheckPlanSector(&pipeline.InputPlan{Name: "No sector"}, nil, targets)
	if r := NewSectorCheckReport(targets, []SectorPlanCheck{none}); r.Outcome() != SectorNothingAssessed {
		t.Fatalf("no sector: outcome %d", r.Outcome())
	}
	if r := NewSectorCheckReport(targets, nil); r.Outcome() != SectorNothingAssessed {
		t.Fatalf("no plans: outcome %d", r.Outcome())
	}
	full := CheckPlanSector(&pipeline.InputPlan{Name: "Full", Sector: "Education", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2026-08-31"),
		Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(fullCounters(map[string]int64{
			"african_male_top_managers": 3, "african_female_top_managers": 5, "white_male_top_managers": 2, "african_male_semi_skilled_employees": 100}))},
			{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(dis)}}}, nil, targets)
	if r := NewSectorCheckReport(targets, []SectorPlanCheck{full}); full.Status != SectorMet || r.Outcome() != sectorAllMet {
		t.Fatalf("full: status %s outcome %d", full.Status, r.Outcome())
	}
	if r := NewSectorCheckReport(targets, []SectorPlanCheck{full, none}); r.Outcome() != SectorIncomplete {
		t.Fatalf("full + no sector: outcome %d", r.Outcome())
	}
}
