package profile_test

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/formats/roster"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/profile"
)

// spellings are words payroll exports use, with what they mean.
var (
	raceWords  = map[string]string{"African": "african", "A": "african", "Black African": "african", "Coloured": "coloured", "C": "coloured", "Indian": "indian", "I": "indian", "Indian/Asian": "indian", "Asian": "indian", "White": "white", "W": "white"}
	gradeWords = map[string]string{"F+": "top_managers", "G": "top_managers", "F3": "top_managers", "E Upper": "senior_managers", "E1": "senior_managers", "D Lower": "middle_managers", "D5": "middle_managers", "C2": "junior_managers", "C Upper": "junior_managers", "B4": "semi_skilled_employees", "B Lower": "semi_skilled_employees", "A": "unskilled_employees", "A3": "unskilled_employees"}
	levelWords = map[string]string{"Top management": "top_managers", "Senior management": "senior_managers", "Professionally qualified and experienced specialists and mid-management": "middle_managers", "Junior management": "junior_managers", "Semi-skilled": "semi_skilled_employees", "Unskilled and defined decision making": "unskilled_employees"}
	yesWords   = []string{"Yes", "Y", "true", "1", "Disabled"}
	noWords    = []string{"No", "N", "false", "0", ""}
	tempWords  = []string{"Temporary", "Fixed term", "Contract", "Casual"}
)

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestProfileCountsProperty: for random rosters (valid rows, rows with an
// unknown word, repeated employee numbers), the profile's counters equal
// an aggregation made here by the rules, and every row is counted or
// listed.
func TestProfileCountsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := profile.NewCounter(roster.Words(nil))
		want := map[string]int64{}
		n := rapid.IntRange(0, 200).Draw(t, "rows")
		seen := map[string]bool{}
		bad := 0
		for i := 0; i < n; i++ {
			e := profile.Employee{File: "r.csv", Row: i + 2}
			num := fmt.Sprint(rapid.IntRange(0, 300).Draw(t, "number"))
			e.Values[profile.ColNumber] = num
			race := rapid.SampledFrom(keys(raceWords)).Draw(t, "race")
			gender := rapid.SampledFrom([]string{"Male", "M", "Female", "F"}).Draw(t, "gender")
			e.Values[profile.ColRace], e.Values[profile.ColGender] = race, gender
			var level string
			if rapid.Bool().Draw(t, "by grade") {
				g := rapid.SampledFrom(keys(gradeWords)).Draw(t, "grade")
				e.Values[profile.ColGrade], level = g, gradeWords[g]
			} else {
				l := rapid.SampledFrom(keys(levelWords)).Draw(t, "level")
				e.Values[profile.ColLevel], level = l, levelWords[l]
			}
			disabled := rapid.Bool().Draw(t, "disabled")
			e.Values[profile.ColDisability] = rapid.SampledFrom(map[bool][]string{true: yesWords, false: noWords}[disabled]).Draw(t, "dis word")
			foreign := rapid.IntRange(0, 9).Draw(t, "foreign") == 0
			if foreign {
				e.Values[profile.ColNationality] = "Zimbabwean"
			}
			temporary := rapid.Bool().Draw(t, "temporary")
			if temporary {
				e.Values[profile.ColEmploymentType] = rapid.SampledFrom(tempWords).Draw(t, "temp word")
			}
			broken := rapid.IntRange(0, 19).Draw(t, "broken") == 0
			if broken {
				e.Values[profile.ColGender] = "Other"
			}
			c.Add(&e)
			if seen[num] || broken {
				bad++
				seen[num] = true
				continue
			}
			seen[num] = true
			r := raceWords[race]
			if foreign {
				r = "foreign"
			}
			g := map[string]string{"Male": "male", "M": "male", "Female": "female", "F": "female"}[gender]
			levels := []string{level, "total_permanent_employees", "grand_total_employees"}
			if temporary {
				levels = []string{"temporary_employees", "grand_total_employees"}
			}
			for _, l := range levels {
				want[pipeline.TargetAll+" "+pipeline.CounterName(r, g, l)]++
				if disabled {
					want[pipeline.TargetDisabled+" "+pipeline.CounterName(r, g, l)]++
				}
			}
		}
		p := c.Profile()
		if p.Employees != n || p.Classified != n-bad || len(p.Unclassified) != bad {
			t.Fatalf("employees %d classified %d unclassified %d; want %d, %d, %d", p.Employees, p.Classified, len(p.Unclassified), n, n-bad, bad)
		}
		for _, tt := range pipeline.TargetTypes {
			for name, v := range p.Targets[tt].All() {
				if w := want[tt+" "+name]; v != w {
					t.Fatalf("%s %s = %d, want %d", tt, name, v, w)
				}
			}
		}
	})
}

func TestGrades(t *testing.T) {
	for grade, want := range map[string]string{
		"a1": "unskilled_employees", "a3": "unskilled_employees", "a": "unskilled_employees",
		"b5": "semi_skilled_employees", "b lower": "semi_skilled_employees", "b upper": "semi_skilled_employees",
		"c1": "junior_managers", "d upper": "middle_managers", "e3": "senior_managers",
		"f5": "top_managers", "f": "top_managers", "g": "top_managers", "f upper": "top_managers",
		"a4": "", "b6": "", "g1": "", "g upper": "", "h": "", "": "", "c 1 2": "", "peromnes 3": "",
	} {
		got, ok := profile.Grade(grade)
		if got != want || ok != (want != "") {
			t.Errorf("Grade(%q) = %q, %v; want %q", grade, got, ok, want)
		}
	}
	if strings.Contains(strings.ToLower(profile.DefaultName), "workforce profile") {
		t.Fatal(profile.DefaultName)
	}
}
