package propose

import (
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

func TestParseWeights(t *testing.T) {
	w, err := ParseWeights([]string{"african=8", " Coloured = 1", "white=2"})
	if err != nil || w["african"] != 8 || w["coloured"] != 1 || w["white"] != 2 || len(w) != 3 {
		t.Fatalf("%v %v", w, err)
	}
	if w, err := ParseWeights(nil); w != nil || err != nil {
		t.Fatalf("no pairs: %v %v", w, err)
	}
	for pairs, want := range map[string]string{
		"white=3":      "designated races of men",
		"foreign=1":    "not a designated race",
		"african":      "RACE=WEIGHT",
		"african=-1":   "RACE=WEIGHT",
		"african=1.5":  "RACE=WEIGHT",
		"african=9e99": "RACE=WEIGHT",
	} {
		if _, err := ParseWeights(strings.Split(pairs, ",")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", pairs, err, want)
		}
	}
}

func TestProfileOf(t *testing.T) {
	allC := pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3})
	disC := pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 1})
	p := &pipeline.InputPlan{Targets: []*pipeline.InputTarget{
		{YearNumber: 1, TargetType: pipeline.TargetAll, Counters: allC},
		{YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: disC},
	}}
	c, blank, err := ProfileOf(p)
	if err != nil || c[all][african][male][0] != 3 || c[disabled][african][male][levelGrandTotal] != 1 || len(blank) != 2*69 {
		t.Fatalf("%v %d blank %v", err, len(blank), c[all][african][male])
	}
	p.Targets = p.Targets[:1]
	if _, _, err := ProfileOf(p); err == nil || !strings.Contains(err.Error(), "no disabled_employees") {
		t.Fatalf("one target: %v", err)
	}
	p.Targets = append(p.Targets, &pipeline.InputTarget{YearNumber: 2, TargetType: pipeline.TargetAll, Counters: allC})
	if _, _, err := ProfileOf(p); err == nil || !strings.Contains(err.Error(), "several years") {
		t.Fatalf("two years: %v", err)
	}
}

func TestProfileJSON(t *testing.T) {
	c, blank, err := ProfileJSON(strings.NewReader(`{"employees": 4, "targets": {"all_employees": {"number_of_white_male_top_managers": 4, "number_of_white_male_grand_total_employees": 99},
		"disabled_employees": {"number_of_white_male_top_managers": 1}}}`))
	if err != nil || c[all][white][male][0] != 4 || c[all][white][male][levelGrandTotal] != 4 || c[disabled][white][male][0] != 1 || len(blank) != 2*69 {
		t.Fatalf("%v %d", err, len(blank))
	}
	for doc, want := range map[string]string{
		`{"targets": {"all_employees": {}}}`:                                                                   "no disabled_employees",
		`{"targets": {"everyone": {}}}`:                                                                        "not a target type",
		`{"targets": {"all_employees": {"number_of_x": 1}, "disabled_employees": {}}}`:                         "not a counter",
		`{"targets": {"all_employees": {"number_of_white_male_top_managers": 1.5}, "disabled_employees": {}}}`: "not a whole number",
		`{"targets": {"all_employees": {"number_of_white_male_top_managers": -1}, "disabled_employees": {}}}`:  "not a whole number",
		`[1, 2]`: "not a profile",
	} {
		if _, _, err := ProfileJSON(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}
