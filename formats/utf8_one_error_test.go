package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
	"github.com/eepipe/eepipe/pipeline"
)

// TestBadPlanNameIsOneError: a plan_name that cannot be read (not UTF-8)
// is one error at its cell; the row is not also told that it "has neither
// plan_id nor plan_name", which would contradict the cell the user sees.
func TestBadPlanNameIsOneError(t *testing.T) {
	parts := xlsxtest.Parts(t, xlsxtest.SmallFlat(t, nil))
	before := string(parts[xlsxtest.SheetPart])
	parts[xlsxtest.SheetPart] = []byte(strings.Replace(before, `<c r="A3" t="s"><v>`, `<c r="A3" t="inlineStr"><is><t>Fuzz `+"\xc3\x28"+` Plan</t></is><v>`, 1))
	if string(parts[xlsxtest.SheetPart]) == before {
		t.Fatal("the patch did not apply")
	}
	path := filepath.Join(t.TempDir(), "bad.xlsx")
	if err := os.WriteFile(path, xlsxtest.Zip(parts), 0o644); err != nil {
		t.Fatal(err)
	}
	batch, err := ReadFiles([]string{path}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, p := range batch.Problems {
		if p.Severity == pipeline.Error {
			errs = append(errs, p.Origin.Cell+": "+p.Message)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "A3") || !strings.Contains(errs[0], "not UTF-8") {
		t.Errorf("errors:\n%s\nwant exactly one, the UTF-8 error at A3", strings.Join(errs, "\n"))
	}
}
