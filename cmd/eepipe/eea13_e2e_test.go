package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
)

// eea13Fixtures holds the EEA13 workbooks of testdata/eea13/make_eea13.py.
const eea13Fixtures = "../../testdata/eea13"

// targetsOf returns the targets of the one plan of a batch, by
// "financial year|target type".
func targetsOf(t *testing.T, b *pipeline.Batch) map[string]map[string]int64 {
	t.Helper()
	if len(b.Plans) != 1 {
		t.Fatalf("%d plans read; want 1", len(b.Plans))
	}
	out := map[string]map[string]int64{}
	for _, tg := range b.Plans[0].Targets {
		out[tg.FinancialYear.String()+"|"+tg.TargetType] = tg.Counters.Map()
	}
	return out
}

// TestEEA13WorkbookAppliesItsTargetsNotItsProfile: validate of a
// consultant's EEA13 plan workbook says its profile is the baseline; apply
// against the sandbox over HTTP writes its yearly targets and goals
// exactly (the export of what the service holds reads back as the file's
// targets) and never the profile; a second apply writes nothing; check
// reports the profile as the current workforce.
func TestEEA13WorkbookAppliesItsTargetsNotItsProfile(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	for _, file := range []string{"op_eea13_plan.xlsx", "lo_eea13_plan.xlsx"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(eea13Fixtures, file)
			r := e.run("validate", path)
			if r.code != ExitOK || !strings.Contains(r.out, "read as the baseline (the current workforce), never written as a target") {
				t.Fatalf("validate: exit %d\n%s%s", r.code, r.out, r.err)
			}
			if r := e.run("apply", path, "--no-recalc"); r.code != ExitOK {
				t.Fatalf("apply: exit %d\n%s%s", r.code, r.out, r.err)
			}
			served := filepath.Join(e.dir, file+".csv")
			if r := e.run("export", "-o", served); r.code != ExitOK {
				t.Fatalf("export: exit %d\n%s", r.code, r.err)
			}
			in, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := formats.ReadFiles([]string{served}, formats.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, got := targetsOf(t, in), targetsOf(t, out)
			if len(want) != 6 {
				t.Fatalf("the file has %d targets; want 6", len(want))
			}
			for k, w := range want {
				if !maps.Equal(got[k], w) {
					t.Errorf("%s: the service holds %v; want %v", k, got[k], w)
				}
			}
			for k, counters := range got {
				for name, v := range counters {
					if v >= 1000 && !strings.Contains(name, "total") {
						t.Errorf("%s %s = %d: a profile value was written", k, name, v)
					}
				}
			}
			e.srv.Sandbox.ResetStats()
			if r := e.run("apply", path, "--no-recalc"); r.code != ExitOK || e.srv.Sandbox.Stats().Writes != 0 {
				t.Errorf("second apply: exit %d, %d writes\n%s", r.code, e.srv.Sandbox.Stats().Writes, r.err)
			}
			if r := e.run("check", path); !strings.Contains(r.out, "current workforce  top management") {
				t.Errorf("check: exit %d\n%s%s", r.code, r.out, r.err)
			}
		})
	}
}

// TestMapFlagAndConfiguration: a client's own words read with --map, or
// with map: in the configuration (relative to its folder); without the
// mapping file they are refused (exit 2); a mapping file with an unknown
// name is refused with its line before anything is read.
func TestMapFlagAndConfiguration(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	book := filepath.Join(eea13Fixtures, "lo_client_words.xlsx")
	words, _ := filepath.Abs(filepath.Join(eea13Fixtures, "client_words.yaml"))
	if r := e.run("validate", book); r.code != ExitInvalid || !strings.Contains(r.out, `"Exco" is not an occupational level`) {
		t.Errorf("without the mapping file: exit %d\n%s", r.code, r.out)
	}
	if r := e.run("validate", "--map", words, book); r.code != ExitOK || !strings.Contains(r.out, "no problems") {
		t.Errorf("--map: exit %d\n%s%s", r.code, r.out, r.err)
	}
	cfg := filepath.Join(e.dir, "map.yaml")
	writeFile(t, cfg, "map: words.yaml\n", 0o600)
	writeFile(t, filepath.Join(e.dir, "words.yaml"), mustRead(t, words), 0o600)
	if r := e.run("--config", cfg, "validate", book); r.code != ExitOK {
		t.Errorf("map: in the configuration: exit %d\n%s%s", r.code, r.out, r.err)
	}
	bad := filepath.Join(e.dir, "bad.yaml")
	writeFile(t, bad, "levels:\n  exco: [Exco]\n", 0o600)
	if r := e.run("validate", "--map", bad, book); r.code != ExitInvalid || !strings.Contains(r.err, `bad.yaml:2: levels: "exco" is not a level name`) {
		t.Errorf("a bad mapping file: exit %d\n%s", r.code, r.err)
	}
	e.singleAccount()
	if r := e.run("apply", "--map", words, book, "--no-recalc"); r.code != ExitOK {
		t.Errorf("apply --map: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if r := e.run("diff", "--map", words, book); r.code != ExitOK {
		t.Errorf("diff --map after apply: exit %d\n%s%s", r.code, r.out, r.err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
