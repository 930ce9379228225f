package formats

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// gridGolden is what a grid workbook reads into: the assembled model and
// every problem, one line each.
type gridGolden struct {
	Plans    []modelPlan `json:"plans"`
	Problems []string    `json:"problems"`
}

// TestGridGolden reads every workbook under testdata/grid (written by
// openpyxl, see make_fixtures.py) and compares the model and the problems
// with its .golden.json file. Regenerate with go test -run TestGridGolden -update.
func TestGridGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "grid", "*.xlsx"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			recs, probs := readGridWorkbook(t, path, nil)
			plans, more := assembleRecords(recs, pipeline.DefaultCatalog())
			probs = append(probs, more...)
			probs.Sort()
			got := gridGolden{Plans: model(plans), Problems: []string{}}
			for _, p := range probs {
				got.Problems = append(got.Problems, p.String())
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(path, ".xlsx") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from %s:\n%s", path, golden, buf.String())
			}
		})
	}
}
