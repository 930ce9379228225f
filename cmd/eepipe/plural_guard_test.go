package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoParenthesisedPlurals: no message of eepipe says "1 counter(s)" or
// "3 run(s)": every count picks its noun (pipeline.Plural). It scans the
// string literals of every non-test Go file of the module.
func TestNoParenthesisedPlurals(t *testing.T) {
	lit := regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
	paren := regexp.MustCompile(`[a-z]\((s|es)\)`)
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != filepath.Join("..", "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for _, l := range lit.FindAllString(line, -1) {
				if paren.MatchString(l) {
					t.Errorf("%s:%d: %s: say the count's noun (pipeline.Plural), not %q", path, i+1, l, paren.FindString(l))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOnePluralHome: a count's noun is chosen in one place,
// pipeline/plural.go (Plural, PluralNoun); no other non-test Go file of the
// module declares a plural helper of its own.
func TestOnePluralHome(t *testing.T) {
	decl := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?(\w*[Pp]lural\w*)\(`)
	allowed := map[string]bool{
		filepath.Join("..", "..", "pipeline", "plural.go"): true,
	}
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != filepath.Join("..", "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || allowed[path] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			t.Errorf("%s: %s is a plural helper of its own; call pipeline.Plural or pipeline.PluralNoun", path, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
