package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra/doc"
)

var updateReference = flag.Bool("update-reference", false, "rewrite docs/commands from the commands' help")

// referenceDir is where the generated command reference lives.
var referenceDir = filepath.Join("..", "..", "docs", "commands")

// TestCommandReferenceUpToDate generates the command reference from the
// cobra commands' help, as cli/cli does, and fails when docs/commands is
// stale: run `go test ./cmd/eepipe -run TestCommandReferenceUpToDate
// -update-reference` after changing a command's help or flags.
func TestCommandReferenceUpToDate(t *testing.T) {
	root := NewCmdRoot(&Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}}, Now: time.Now, Getenv: func(string) string { return "" }})
	root.DisableAutoGenTag = true
	gen := t.TempDir()
	if err := doc.GenMarkdownTree(root, gen); err != nil {
		t.Fatal(err)
	}
	want, err := readTree(gen)
	if err != nil {
		t.Fatal(err)
	}
	if *updateReference {
		if err := os.RemoveAll(referenceDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(referenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range want {
			if err := os.WriteFile(filepath.Join(referenceDir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have, err := readTree(referenceDir)
	if err != nil {
		t.Fatalf("%v: generate the reference with -update-reference", err)
	}
	for name, body := range want {
		switch got, ok := have[name]; {
		case !ok:
			t.Errorf("docs/commands/%s is missing: regenerate with -update-reference", name)
		case got != body:
			t.Errorf("docs/commands/%s is stale: regenerate with -update-reference", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/commands/%s documents no command: regenerate with -update-reference", name)
		}
	}
}

// readTree returns the Markdown files of dir by name.
func readTree(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = string(b)
	}
	return files, nil
}
