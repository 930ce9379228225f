package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/pipeline"
)

// htMinimalXLSX writes a workbook of one sheet whose XML is sheet.
func htMinimalXLSX(t *testing.T, path, sheet string) {
	t.Helper()
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Targets" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
		{"xl/worksheets/sheet1.xml", sheet},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, _ := zw.Create(p.name)
		_, _ = w.Write([]byte(p.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestValidateHostileFilesExitTwo: a row of a million cells, a malformed
// cell reference and an oversized limit each exit 2 with the place.
func TestValidateHostileFilesExitTwo(t *testing.T) {
	dir := t.TempDir()
	header := `<row r="1"><c r="A1" t="inlineStr"><is><t>plan_name</t></is></c><c r="B1" t="inlineStr"><is><t>target_type</t></is></c></row>`
	wide := filepath.Join(dir, "wide.xlsx")
	htMinimalXLSX(t, wide, `<worksheet><sheetData><row r="1">`+strings.Repeat(`<c><v>1</v></c>`, 1_000_000)+`</row></sheetData></worksheet>`)
	badRef := filepath.Join(dir, "ref.xlsx")
	htMinimalXLSX(t, badRef, `<worksheet><sheetData>`+header+`<row r="2"><c r="A2" t="inlineStr"><is><t>P</t></is></c><c r="XFE2"><v>3</v></c></row></sheetData></worksheet>`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", wide}, "more than 16384 cells"},
		{[]string{"validate", badRef}, `Targets!B2: error: the sheet cannot be read to the end: the cell reference "XFE2" is not a cell`},
		{[]string{"validate", "--max-uncompressed", "1K", badRef}, "more than the limit of 1.0 KiB (--max-uncompressed)"},
	} {
		code, out, stderr := vtRun(t, tc.args...)
		if code != ExitInvalid || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s\n%s", tc.args, code, tc.want, out, stderr)
		}
	}
	// --annotate never hands an oversized workbook to excelize.
	ann := filepath.Join(dir, "annotated.xlsx")
	code, out, stderr := vtRun(t, "validate", "--annotate", ann, wide)
	if _, err := os.Stat(ann); code != ExitInvalid || !strings.Contains(stderr, "No annotated copy written") || err == nil {
		t.Errorf("--annotate of an oversized workbook: exit %d, file %v\n%s\n%s", code, err, out, stderr)
	}
	if code, _, stderr := vtRun(t, "validate", "--max-uncompressed", "lots", badRef); code != ExitInvalid || !strings.Contains(stderr, "--max-uncompressed") {
		t.Errorf("bad --max-uncompressed: exit %d\n%s", code, stderr)
	}
}

// TestReaderCrashExitsThree: a reader that fails (a panic, or the internal
// error formats reports for one) exits 3 with "internal error", never 2.
func TestReaderCrashExitsThree(t *testing.T) {
	path := vtWrite(t, filepath.Join(t.TempDir(), "good.csv"), vtGoodCSV)
	for name, read := range map[string]func([]string, formats.ReadOptions) (*pipeline.Batch, error){
		"panic": func([]string, formats.ReadOptions) (*pipeline.Batch, error) { panic("injected reader failure") },
		"internal error": func(p []string, _ formats.ReadOptions) (*pipeline.Batch, error) {
			return nil, &formats.InternalError{File: p[0], Value: "injected reader failure"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }, readFilesFunc: read}
			code := Execute(t.Context(), f, []string{"validate", path})
			if code != ExitFatal || !strings.Contains(errOut.String(), "internal error") || !strings.Contains(errOut.String(), "injected reader failure") {
				t.Fatalf("exit %d, want 3 with an internal error:\n%s", code, errOut.String())
			}
		})
	}
}

// TestLongPlanNameBounded: a plan name of a megabyte is an error in
// validation (never sent), and no message quotes more than a bounded
// prefix of it.
func TestLongPlanNameBounded(t *testing.T) {
	name := strings.Repeat("N", 1<<20)
	path := vtWrite(t, filepath.Join(t.TempDir(), "long.csv"), "plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers,company_vat_number\n"+name+",2025-09-01,2030-08-31,1,all_employees,3,"+strings.Repeat("4", 100)+"\n")
	code, out, stderr := vtRun(t, "validate", path)
	if code != ExitInvalid {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, want := range []string{"plan_name is 1048576 characters long; at most 200 are allowed", "company_vat_number is 100 characters long; at most 64 are allowed", "(1048576 characters in all)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%.2000s", want, out)
		}
	}
	if len(out)+len(stderr) > 8<<10 {
		t.Errorf("the report is %d bytes: the value is quoted whole", len(out)+len(stderr))
	}
}

// TestScheduledRunRemovesOrphanTemps: a run with --output-dir removes the
// temporary files a killed run left there, and nothing else.
func TestScheduledRunRemovesOrphanTemps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process ids are not checked")
	}
	dir := t.TempDir()
	// A day old: removed whoever wrote it (formats tests the other rules).
	old := time.Now().Add(-25 * time.Hour)
	orphan := filepath.Join(dir, ".export.xlsx.tmp-77")
	keep := filepath.Join(dir, "export-2026-11-22T0300Z.xlsx")
	for _, p := range []string{orphan, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Chtimes(p, old, old)
	}
	var out, errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Now: time.Now, Getenv: func(string) string { return "" }}
	ctx, r, err := startRun(t.Context(), f, "export", &scheduleOptions{OutputDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.finish(ctx, nil)
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the orphaned temporary file is still there")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("an output was removed: %v", err)
	}
	if !strings.Contains(errOut.String(), "removed a temporary file a killed run left") {
		t.Errorf("log:\n%s", errOut.String())
	}
}

// TestExportCSVFormulaNameRoundTrip: a plan named like a formula is
// exported to CSV neutralised (a leading quote), and applying the export
// reads the name back exactly, as an error at its cell (a formula-like
// name is never sent: docs/formats.md, "Values"), and sends nothing.
func TestExportCSVFormulaNameRoundTrip(t *testing.T) {
	e := newExEnv(t, nil)
	e.createPlans(e.acme, `=HYPERLINK("http://evil","x")`, 1)
	for _, layout := range []string{"flat", "long"} {
		t.Run(layout, func(t *testing.T) {
			out := e.path(layout + ".csv")
			if code, stdout, stderr := e.run("export", "-o", out, "--company", exAcmeVAT, "--layout", layout); code != 0 {
				t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), `'=HYPERLINK(""http://evil"",""x"")`) || strings.Contains(string(raw), `,"=HYPERLINK`) {
				t.Fatalf("the name is not neutralised:\n%.600s", raw)
			}
			e.srv.Sandbox.ResetStats()
			code, stdout, stderr := e.run("apply", out)
			if code != ExitInvalid || e.srv.Sandbox.Stats().Writes != 0 || !strings.Contains(stderr+stdout, `(plan_name): error: plan_name: "=HYPERLINK(\"http://evil\",\"x\") plan 001" starts like a spreadsheet formula`) {
				t.Fatalf("apply of the export: exit %d, %d writes\n%s\n%s", code, e.srv.Sandbox.Stats().Writes, stdout, stderr)
			}
		})
	}
}
