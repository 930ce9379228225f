package roster

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/profile"
)

// expected is a roster's profile as testdata/make_rosters.py counted it,
// independently of eepipe.
type expected struct {
	Employees    int                         `json:"employees"`
	Classified   int                         `json:"classified"`
	Unclassified []int                       `json:"unclassified_rows"`
	Targets      map[string]map[string]int64 `json:"targets"`
}

func countFile(t *testing.T, path string, m *mapping.File) *profile.Profile {
	t.Helper()
	c := profile.NewCounter(Words(m))
	if err := Read(path, m, xlsx.Limits{}, Sink{Employee: c.Add, Bad: c.Unreadable}); err != nil {
		t.Fatal(err)
	}
	return c.Profile()
}

// TestPayrollRosters reads the rosters made with openpyxl and LibreOffice
// in the shapes of Sage VIP, SimplePay and PaySpace exports, and compares
// each profile with the one the generator counted.
func TestPayrollRosters(t *testing.T) {
	for _, name := range []string{"sage-vip-equity.csv", "simplepay-skills-equity.xlsx", "payspace-eea2-details.xlsx"} {
		t.Run(name, func(t *testing.T) {
			var want expected
			data, err := os.ReadFile(filepath.Join("testdata", strings.TrimSuffix(name, filepath.Ext(name))+".expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			got := countFile(t, filepath.Join("testdata", name), nil)
			if got.Employees != want.Employees || got.Classified != want.Classified {
				t.Errorf("employees %d classified %d, want %d and %d", got.Employees, got.Classified, want.Employees, want.Classified)
			}
			var rows []int
			for _, u := range got.Unclassified {
				rows = append(rows, u.Row)
				if u.File != filepath.Join("testdata", name) || u.Reason == "" {
					t.Errorf("unclassified %+v", u)
				}
			}
			if !slices.Equal(rows, want.Unclassified) {
				t.Errorf("unclassified rows %v, want %v", rows, want.Unclassified)
			}
			for tt, counters := range want.Targets {
				for name, v := range counters {
					if g, _ := got.Targets[tt].ByName(name); g != v {
						t.Errorf("%s %s = %d, want %d", tt, name, g, v)
					}
				}
			}
		})
	}
}

// TestNotARoster: a file without race, gender and level-or-grade columns
// is refused, naming what it lacks.
func TestNotARoster(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "staff.csv")
	if err := os.WriteFile(path, []byte("Employee Number;Surname;Gender\n1;Smith;M\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Read(path, nil, xlsx.Limits{}, Sink{Employee: func(*profile.Employee) {}, Bad: func(string, int, string) {}})
	var nr *NotRosterError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "race (Race, Population Group)") || strings.Contains(err.Error(), "gender (") {
		t.Fatalf("error %v", err)
	}
	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Read(empty, nil, xlsx.Limits{}, Sink{}); err == nil || !strings.Contains(err.Error(), "the file is empty") {
		t.Fatalf("empty file: %v", err)
	}
}

// TestMappingColumnsAndGrades: a client's own headers, words and grading
// (Peromnes) are read through the mapping file; a semicolon CSV with a
// byte-order mark is read as Excel writes it.
func TestMappingColumnsAndGrades(t *testing.T) {
	words := filepath.Join(t.TempDir(), "client.yaml")
	if err := os.WriteFile(words, []byte(`
columns:
  race: [Ethnicity]
  gender: [M/F]
  job_grade: [Band]
  employee_number: [Clock No]
races:
  african: [Afr]
grades:
  P3: top_managers
  P9: junior_managers
`), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Load(words)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "client.csv")
	text := "\ufeffClock No;Ethnicity;M/F;Band\n1;Afr;F;P3\n2;W;M;P9\n3;C;F;P4\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := countFile(t, path, m)
	all := p.Targets[pipeline.TargetAll]
	if v, _ := all.ByName("number_of_african_female_top_managers"); v != 1 {
		t.Errorf("african female top %d", v)
	}
	if v, _ := all.ByName("number_of_white_male_junior_managers"); v != 1 {
		t.Errorf("white male junior %d", v)
	}
	if len(p.Unclassified) != 1 || p.Unclassified[0].Row != 4 || !strings.Contains(p.Unclassified[0].Reason, `job grade "P4"`) {
		t.Errorf("unclassified %+v", p.Unclassified)
	}
}

// FuzzReadCSV: any text is read without a panic; every row handed on has
// its line, and a file that is read as a roster has a header row.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("Race,Gender,Grade\nA,M,C1\n"))
	f.Add([]byte("sep=;\nEmployee No;Race;Sex;Occupational Level\n1;\"W\";F;Top management\n\"2;A\n"))
	f.Add([]byte("\xff\xfeR\x00a\x00c\x00e\x00"))
	f.Add([]byte("Title\n\nRace\tGender\tJob Grade\tDisabled\nI\tF\tF+\tY\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := 0
		err := ReadCSV("fuzz.csv", strings.NewReader(string(data)), nil, Sink{
			Employee: func(e *profile.Employee) {
				if e.Row < 1 {
					t.Fatalf("row %d", e.Row)
				}
				rows++
			},
			Bad: func(file string, row int, reason string) {
				if row < 1 || reason == "" {
					t.Fatalf("bad row %d %q", row, reason)
				}
			},
		})
		if err != nil && rows > 0 {
			var nr *NotRosterError
			if errors.As(err, &nr) {
				t.Fatalf("rows read from a file that is not a roster")
			}
		}
	})
}

// TestBlankAndNameOnlyRows: a blank row is skipped; a row with text only
// in a column the roster does not read (a name, a footer) is listed.
func TestBlankAndNameOnlyRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(path, []byte("Surname,Race,Gender,Grade\nSmith,W,M,C1\n,,,\n\nJones,,,\nTotal: 2,,,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := countFile(t, path, nil)
	if p.Employees != 3 || p.Classified != 1 || len(p.Unclassified) != 2 || p.Unclassified[0].Row != 5 || p.Unclassified[0].Reason != "no race" || p.Unclassified[1].Row != 6 {
		t.Fatalf("%+v", p)
	}
}
