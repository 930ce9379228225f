package mapping

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const example = `# Acme's words
levels:
  top_managers: [Exco, "Executive committee"]
  middle_managers: Band D
races:
  indian: ["Asian (incl. Indian)"]
genders:
  female: [Vroulik]
sectors:
  Transport and Storage: ["Transportation and Storage"]
columns:
  plan_name: [Plan title]
  race: [Ethnicity]
grades:
  P10: senior_managers
  "Band D": middle_managers
`

func TestParseExample(t *testing.T) {
	f, err := parse([]byte(example), "acme.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got  func(string) (string, bool)
		in   string
		want string
	}{
		{f.Level, "EXCO", "top_managers"},
		{f.Level, "executive  committee", "top_managers"},
		{f.Level, "band-d", "middle_managers"},
		{f.Race, "Asian (incl Indian)", "indian"},
		{f.Gender, "vroulik", "female"},
		{f.Sector, "Transportation and Storage", "Transport and Storage"},
		{f.Column, "Plan Title", "plan_name"},
		{f.Column, "ethnicity", "race"},
		{f.Grade, "p10", "senior_managers"},
		{f.Grade, "Band D", "middle_managers"},
	} {
		if got, ok := c.got(c.in); !ok || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	// A spelling counts only where its kind is read.
	if _, ok := f.Gender("Band D"); ok {
		t.Error("a level spelling read as a gender")
	}
	if _, ok := f.Level("Vroulik"); ok {
		t.Error("a gender spelling read as a level")
	}
	if got := f.Spellings("levels", "top_managers"); strings.Join(got, "|") != "Exco|Executive committee" {
		t.Errorf("spellings: %q", got)
	}
}

func TestNilFileTeachesNothing(t *testing.T) {
	var f *File
	if _, ok := f.Level("Exco"); ok || !f.Empty() || f.Spellings("levels", "top_managers") != nil {
		t.Fatal("a nil file taught something")
	}
}

func TestParseRefusesWithLines(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown key", "levles:\n  top_managers: Exco\n", `m.yaml:1: unknown key "levles"`},
		{"unknown level", "levels:\n  top_manager: Exco\n", `m.yaml:2: levels: "top_manager" is not a level name`},
		{"unknown race", "races:\n  asian: Asian\n", `m.yaml:2: races: "asian" is not a race name`},
		{"unknown sector", "sectors:\n  Transportation: [Trans]\n", `m.yaml:2: sectors: "Transportation" is not a sector`},
		{"unknown column", "columns:\n  planname: [Plan]\n", `m.yaml:2: columns: "planname" is not a column name`},
		{"shared spelling", "levels:\n  top_managers: Exco\n  senior_managers: [Seniors, EXCO]\n", `m.yaml:3: levels: "EXCO" would mean both top_managers and senior_managers`},
		{"shared race spelling", "races:\n  indian: [Desi]\n  african: [desi]\n", `m.yaml:3: races: "desi" would mean both indian and african`},
		{"built-in race spelling", "races:\n  african: [Asian]\n", `m.yaml:2: races: "Asian" is eepipe's own spelling of indian, so it cannot mean african`},
		{"built-in level spelling", "levels:\n  senior_managers: [Top management]\n", `m.yaml:2: levels: "Top management" is eepipe's own spelling of top_managers`},
		{"built-in gender spelling", "genders:\n  male: [F]\n", `m.yaml:2: genders: "F" is eepipe's own spelling of female`},
		{"built-in sector spelling", "sectors:\n  Construction: [Transportation and Storage]\n", `m.yaml:2: sectors: "Transportation and Storage" is eepipe's own spelling of Transport and Storage`},
		{"shared level words", "levels:\n  top_managers: [The Exco]\n  senior_managers: [Exco]\n", `m.yaml:3: levels: "Exco" reads as a spelling of top_managers as well as of senior_managers`},
		{"grade to a non-level", "grades:\n  F: top_management\n", `m.yaml:2: grades: "F": "top_management" is not an occupational level`},
		{"grade to a summary level", "grades:\n  F: total_permanent_employees\n", `is not an occupational level`},
		{"grade twice", "grades:\n  F: top_managers\n  f: senior_managers\n", `m.yaml:3: grades: "f" would mean both top_managers and senior_managers`},
		{"blank spelling", "levels:\n  top_managers: ['--']\n", `m.yaml:2: levels: top_managers: a spelling with no letters or digits`},
		{"nested list", "levels:\n  top_managers: [[Exco]]\n", `m.yaml:2: levels: top_managers: each spelling is one piece of text`},
		{"not a map", "- levels\n", `m.yaml:1: a mapping file is a map`},
		{"key twice", "levels: {}\nlevels: {}\n", `m.yaml:2: levels is given twice`},
		{"not yaml", "levels: [\n", `m.yaml: not YAML`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse([]byte(c.text), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := parse([]byte("levels:\n  topx: A\nraces:\n  asian: B\nfoo: 1\n"), "m.yaml")
	var n int
	for _, line := range strings.Split(err.Error(), "\n") {
		var e *Error
		if errors.As(err, &e) && line != "" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d problems reported, want 3: %v", n, err)
	}
}

func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("levels:\n"+strings.Repeat(" ", MaxFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a file over the bound: %v", err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(ok); err != nil || f.Path != ok {
		t.Fatalf("load: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte("levels:\n  top_managers: [a, b]\ngrades:\n  F: top_managers\n"))
	f.Add([]byte("- x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parse(data, "f.yaml")
		if err != nil {
			return
		}
		// Every spelling the file gives reads back as its name.
		for _, kind := range Kinds {
			for _, name := range names(kind) {
				for _, sp := range m.Spellings(kind, name) {
					var got string
					switch kind {
					case "levels":
						got, _ = m.Level(sp)
					case "races":
						got, _ = m.Race(sp)
					case "genders":
						got, _ = m.Gender(sp)
					case "sectors":
						got, _ = m.Sector(sp)
					case "columns":
						got, _ = m.Column(sp)
					}
					if got != name {
						t.Fatalf("%s %q reads as %q, want %q", kind, sp, got, name)
					}
				}
			}
		}
	})
}
