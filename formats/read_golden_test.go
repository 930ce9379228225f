package formats

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
)

// The -update flag rewrites golden files; it is shared by the package's
// golden tests, whichever file defines it first.
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata")
	}
	return true
}()

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if updating() {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file; run go test -update and review the diff\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
	}
}

// baseOrigins replaces the file paths of a batch with their base names so
// that goldens do not depend on where the tests run.
func baseOrigins(b *pipeline.Batch) {
	base := func(o *pipeline.Origin) {
		if o.File != "" {
			o.File = filepath.Base(o.File)
		}
	}
	for i := range b.Problems {
		base(&b.Problems[i].Origin)
	}
	for _, p := range b.Plans {
		base(&p.Origin)
		for _, t := range p.Targets {
			// The golden files list every counter's cell, however the
			// model shares them (Cells, Places or the table's Columns).
			cells := map[string]pipeline.Origin{}
			for k := range t.Counters.All() {
				if o := t.CellOf(k); o != (pipeline.Origin{}) {
					base(&o)
					cells[k] = o
				}
			}
			t.Cells, t.Columns, t.Places = cells, nil, nil
			base(&t.Origin)
		}
	}
	for i, f := range b.Files {
		b.Files[i] = filepath.Base(f)
	}
}

func inputFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasSuffix(n, ".golden.json") || strings.HasSuffix(n, ".report.txt") {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// TestFlatGolden reads every good flat fixture (written by excelize,
// openpyxl, LibreOffice or by hand) into the domain model and compares it,
// with its problems, with the golden JSON next to it.
func TestFlatGolden(t *testing.T) {
	files := inputFiles(t, filepath.Join("..", "testdata", "flat"))
	if len(files) < 4 {
		t.Fatalf("only %d flat fixtures", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := ReadFiles([]string{path}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if b.Problems.HasErrors() {
				t.Errorf("a good fixture has errors:\n%v", b.Problems)
			}
			if len(b.Plans) == 0 {
				t.Errorf("no plans read")
			}
			baseOrigins(b)
			got, err := json.MarshalIndent(struct {
				Plans    []*pipeline.InputPlan `json:"plans"`
				Problems pipeline.Problems     `json:"problems"`
			}{b.Plans, b.Problems}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, path+".golden.json", append(got, '\n'))
		})
	}
}

// TestBadCorpus reads every file of the bad-input corpus and compares the
// readable report with the golden report next to it. Every file must give
// at least one problem, and all but the warning-only ones an error.
func TestBadCorpus(t *testing.T) {
	dir := filepath.Join("..", "testdata", "bad")
	files := inputFiles(t, dir)
	if len(files) < 25 {
		t.Fatalf("the bad-input corpus has %d files, want at least 25", len(files))
	}
	warningsOnly := map[string]bool{"domain_warnings.csv": true, "lost_leading_zero.xlsx": true, "header_only.csv": true}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			b, err := ReadFiles([]string{path}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if warningsOnly[name] {
				if len(b.Problems) == 0 || b.Problems.HasErrors() {
					t.Errorf("want warnings only, got:\n%v", b.Problems)
				}
			} else if !b.Problems.HasErrors() {
				t.Errorf("no error reported for a bad file; problems: %v", b.Problems)
			}
			for _, p := range b.Problems {
				if p.Origin.File == "" || p.Message == "" {
					t.Errorf("problem without file or message: %+v", p)
				}
			}
			baseOrigins(b)
			var buf bytes.Buffer
			if err := reports.WriteProblemsText(&buf, b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, path+".report.txt", buf.Bytes())
		})
	}
}
