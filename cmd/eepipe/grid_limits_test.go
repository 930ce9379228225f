package main

import (
	"archive/zip"
	"strconv"
	"strings"
	"testing"
)

// TestGridExportMaxUncompressed: a grid export is bounded as a whole by
// --max-uncompressed, as every workbook is, and by no grid limit of its
// own: reconcile reads it at a limit of exactly its unpacked size, and
// refuses it (exit 2, naming the flag) a byte below.
func TestGridExportMaxUncompressed(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, "Acme", 3)
	file := e.path("grid.xlsx")
	if code, stdout, stderr := e.run("export", "-o", file, "--layout", "grid"); code != 0 {
		t.Fatalf("export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range zr.File {
		total += int64(f.UncompressedSize64)
	}
	zr.Close()
	code, stdout, stderr := e.run("reconcile", "--max-uncompressed", strconv.FormatInt(total, 10), file)
	if code != 0 || !strings.Contains(stdout, "in sync") {
		t.Fatalf("reconcile at --max-uncompressed %d: exit %d\n%s\n%s", total, code, stdout, stderr)
	}
	code, stdout, stderr = e.run("reconcile", "--max-uncompressed", strconv.FormatInt(total-1, 10), file)
	if code != ExitInvalid || !strings.Contains(stdout+stderr, "(--max-uncompressed)") || !strings.Contains(stdout+stderr, "oversized") {
		t.Fatalf("reconcile at --max-uncompressed %d: exit %d, want %d naming the limit\n%s\n%s", total-1, code, ExitInvalid, stdout, stderr)
	}
}
