package xlsx

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEngineImports: the XLSX engine sits below every writer and reader of
// workbooks (templates included), so of this module it imports pipeline
// alone, for the cell and origin types (docs/architecture.md).
func TestEngineImports(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/eepipe/eepipe/"
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) && path != module+"pipeline" {
				t.Errorf("%s imports %s; the engine imports nothing of the module but pipeline", name, path)
			}
		}
	}
}
