package templates

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPaletteIsTheOneHome: no writer outside templates spells a colour;
// each names one of the palette (palette.go). It scans the string
// literals of every non-test Go file of the module for an RGB hex colour
// ("C6EFCE", srgbClr val="404040"). The XLSX engine is left out: it copies
// styles (Excel's automatic black for a border without a colour), it
// chooses none.
func TestPaletteIsTheOneHome(t *testing.T) {
	root := filepath.Join("..")
	colour := regexp.MustCompile(`(?:"|val=\\?")[0-9A-Fa-f]{6}(?:\\?")`)
	lit := regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
	skip := map[string]bool{filepath.Join(root, "templates"): true, filepath.Join(root, "formats", "xlsx"): true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (skip[path] || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range lit.FindAllString(string(b), -1) {
			if m := colour.FindString(l); m != "" && (strings.HasPrefix(m, "val=") || len(l) == 8) {
				t.Errorf("%s: the colour %s is spelt out; name it in templates/palette.go", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
