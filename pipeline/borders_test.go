package pipeline_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/eepipe/eepipe"

// goList runs go list with args in the module's root and returns its
// lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH: the import borders are checked where it is")
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// TestModelImportsNothingOfTheModule: the model at the root of pipeline is
// what every other package speaks; it depends on no package of the module
// (directly or not), so no job's package can pull another job's in through
// it (docs/architecture.md).
func TestModelImportsNothingOfTheModule(t *testing.T) {
	for _, dep := range goList(t, "-deps", "-f", "{{.ImportPath}}", "./pipeline") {
		if strings.HasPrefix(dep, module+"/") && dep != module+"/pipeline" {
			t.Errorf("pipeline (the model) depends on %s; the model imports nothing of the module", dep)
		}
	}
}

// TestImportBorders: the packages of the domain import only the packages
// below them (the sketch of docs/architecture.md), and nothing but cmd
// and the reports imports the Runner (pipeline/run).
func TestImportBorders(t *testing.T) {
	allowed := map[string][]string{
		"pipeline/assemble": {"pipeline"},
		"pipeline/diff":     {"pipeline"},
		"pipeline/sector":   {"pipeline"},
		"pipeline/savedset": {"pipeline", "pipeline/diff"},
		"pipeline/run":      {"pace", "pipeline", "pipeline/diff", "pipeline/savedset", "pipeline/sector"},
	}
	runUsers := []string{"cmd/eepipe", "formats/reports"}
	seen := map[string]bool{}
	for _, line := range goList(t, "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, "|")
		pkg = strings.TrimPrefix(pkg, module+"/")
		seen[pkg] = true
		for _, imp := range strings.Split(imports, ",") {
			imp, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if want, ok := allowed[pkg]; ok && !slices.Contains(want, imp) {
				t.Errorf("%s imports %s; it may import only %s", pkg, imp, strings.Join(want, ", "))
			}
			if imp == "pipeline/run" && !slices.Contains(runUsers, pkg) {
				t.Errorf("%s imports pipeline/run; only %s do (the Runner is wired by cmd)", pkg, strings.Join(runUsers, " and "))
			}
		}
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("%s is not in the module any more: update the borders", pkg)
		}
	}
}
