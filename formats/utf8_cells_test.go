package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
	"github.com/eepipe/eepipe/pipeline"
)

// TestXLSXInvalidUTF8IsAnErrorAtTheCell: a text cell whose bytes are not
// UTF-8 (written into the sheet XML and the shared strings by hand: Excel
// never writes them, a damaged or hand-made file does) is an error at that
// cell, as in CSV; the service would store U+FFFD and the name would never
// match again.
func TestXLSXInvalidUTF8IsAnErrorAtTheCell(t *testing.T) {
	base := xlsxtest.SmallFlat(t, nil)
	tests := []struct {
		name, part string
		patch      func(string) string
		cell       string
		message    string // what the error at the cell says
	}{
		// The XML decoder refuses the whole shared-string table; its cells
		// are unreadable (the reason is the readers' to word).
		{"shared string", xlsxtest.SSTPart, func(s string) string { return strings.Replace(s, "Fuzz Plan", "Fuzz \xff\xfe Plan", 1) }, "A2", ""},
		// An inline string reaches validation: the UTF-8 check of text
		// fields, the same for every reader.
		{"inline string", xlsxtest.SheetPart, func(s string) string {
			return strings.Replace(s, `<c r="A3" t="s"><v>`, `<c r="A3" t="inlineStr"><is><t>Fuzz `+"\xc3\x28"+` Plan</t></is><v>`, 1)
		}, "A3", "not UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := xlsxtest.Parts(t, base)
			before := string(parts[tc.part])
			parts[tc.part] = []byte(tc.patch(before))
			if string(parts[tc.part]) == before {
				t.Fatalf("the patch did not apply to %s:\n%s", tc.part, before)
			}
			path := filepath.Join(t.TempDir(), "bad.xlsx")
			if err := os.WriteFile(path, xlsxtest.Zip(parts), 0o644); err != nil {
				t.Fatal(err)
			}
			batch, err := ReadFiles([]string{path}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, p := range batch.Problems {
				if p.Severity == pipeline.Error && p.Origin.Cell == tc.cell && strings.Contains(p.Message, tc.message) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no error %q at %s; problems: %v", tc.message, tc.cell, batch.Problems)
			}
		})
	}
}
