package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/templates"
)

func runTemplateCmd(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now,
		Getenv: func(string) string { return "" }}
	code = Execute(context.Background(), f, args)
	if out.Len() != 0 {
		t.Errorf("template wrote to stdout: %q", out.String())
	}
	return code, errb.String()
}

func TestTemplateCommand(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "plan.xlsx")
	if code, msg := runTemplateCmd(t, "template", "-o", grid, "--years", "3"); code != ExitOK || !strings.Contains(msg, "3 financial years") {
		t.Fatalf("exit %d: %s", code, msg)
	}
	f, err := excelize.OpenFile(grid)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.GetRows(templates.PlanSheetName)
	f.Close()
	var labels int
	for _, r := range rows {
		if len(r) > 0 && strings.HasPrefix(r[0], "Year ") {
			labels++
		}
	}
	if labels != 6 {
		t.Errorf("%d grids, want 6 (3 years x 2 target types)", labels)
	}

	// An existing file is kept unless --force.
	before, _ := os.ReadFile(grid)
	if code, msg := runTemplateCmd(t, "template", "-o", grid, "--layout", "flat"); code != ExitInvalid || !strings.Contains(msg, "--force") {
		t.Errorf("overwrite without --force: exit %d: %s", code, msg)
	}
	if after, _ := os.ReadFile(grid); !bytes.Equal(before, after) {
		t.Error("the existing file was changed")
	}
	if code, msg := runTemplateCmd(t, "template", "-o", grid, "--layout", "flat", "--force"); code != ExitOK {
		t.Errorf("--force: exit %d: %s", code, msg)
	}

	// The global --catalog shapes the grid.
	catPath := filepath.Join(dir, "counters.txt")
	if err := os.WriteFile(catPath, []byte("number_of_african_male_top_managers\nnumber_of_african_female_top_managers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.xlsx")
	if code, msg := runTemplateCmd(t, "template", "-o", small, "--catalog", catPath, "--start", "2026-09-01"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, msg)
	}
	f, err = excelize.OpenFile(small)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ = f.GetRows(templates.PlanSheetName)
	f.Close()
	joined := ""
	for _, r := range rows {
		joined += strings.Join(r, "|") + "\n"
	}
	if !strings.Contains(joined, "Year 1 — 2026/27 — All employees") || strings.Contains(joined, "Coloured") ||
		!strings.Contains(joined, "Top management") || strings.Contains(joined, "Senior management") {
		t.Errorf("custom catalog template:\n%s", joined)
	}

	for _, bad := range [][]string{
		{"template"},
		{"template", "-o", filepath.Join(dir, "x.csv")},
		{"template", "-o", filepath.Join(dir, "y.xlsx"), "--layout", "wide"},
		{"template", "-o", filepath.Join(dir, "y.xlsx"), "--years", "0"},
		{"template", "-o", filepath.Join(dir, "y.xlsx"), "--start", "2024-09-01"},
		{"template", "-o", filepath.Join(dir, "y.xlsx"), "--start", "01/09/2026"},
		{"template", "-o", filepath.Join(dir, "y.xlsx"), "--catalog", filepath.Join(dir, "missing.txt")},
		{"template", "-o", filepath.Join(dir, "y.xlsx"), "extra-arg"},
	} {
		if code, msg := runTemplateCmd(t, bad...); code != ExitInvalid || msg == "" {
			t.Errorf("%v: exit %d, message %q; want %d with a message", bad, code, msg, ExitInvalid)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "y.xlsx")); err == nil {
		t.Error("a refused command wrote its file")
	}
}
