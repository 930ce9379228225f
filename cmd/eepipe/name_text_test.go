package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
)

// hostileServiceNames are plan names no workbook may send, with what the
// error says of each: a spreadsheet would run the first four as
// formulas, and the others hold characters that hide or move text
// (docs/formats.md, "Values"); diff -o refuses them alike.
var hostileServiceNames = []struct{ name, want string }{
	{`=HYPERLINK("http://evil","x")`, "starts like a spreadsheet formula"},
	{"+27 Sales", "starts like a spreadsheet formula"},
	{"-1+2 Plan", "starts like a spreadsheet formula"},
	{"@SUM(A1) Plan", "starts like a spreadsheet formula"},
	{"Plan \x1b[31mred", "a control character (U+001B)"},
	{"Plan\rsecond line", "a control character (U+000D)"},
	{"Plan \u202Efdp.exe", "a bidirectional text control (U+202E)"},
}

// nameTextPlans are one new acme plan for each name.
func nameTextPlans(names []string) []*pipeline.InputPlan {
	var plans []*pipeline.InputPlan
	for _, n := range names {
		plans = append(plans, &pipeline.InputPlan{Name: n, StartDate: mustDate("2025-09-01"), EndDate: mustDate("2030-08-31"),
			Company: pipeline.CompanyIDs{VAT: exAcmeVAT},
			Targets: []*pipeline.InputTarget{{YearNumber: 1, TargetType: pipeline.TargetAll,
				Counters: pipeline.CountersOf(map[string]int64{"number_of_african_male_top_managers": 3})}}})
	}
	return plans
}

// nameTextForms write plans as each workbook form eepipe reads: flat and
// long CSV, flat and grid XLSX.
var nameTextForms = []struct {
	file  string
	write func(string, []*pipeline.InputPlan) error
}{
	{"flat.csv", func(p string, plans []*pipeline.InputPlan) error { return table.WriteFlatCSV(p, plans, nil) }},
	{"long.csv", func(p string, plans []*pipeline.InputPlan) error { return table.WriteLongCSV(p, plans, nil) }},
	{"flat.xlsx", writeFlatWorkbookEscaped},
	{"grid.xlsx", writeGridXLSX},
}

// writeFlatWorkbookEscaped is writeFlatWorkbook keeping the control
// characters of the plans' names, which its writer drops: each is written
// as the _xHHHH_ escape that Excel and LibreOffice write for it.
func writeFlatWorkbookEscaped(path string, plans []*pipeline.InputPlan) error {
	ctl := regexp.MustCompile(`[\x00-\x1f]`)
	marked := make([]*pipeline.InputPlan, len(plans))
	for i, p := range plans {
		c := *p
		c.Name = ctl.ReplaceAllStringFunc(p.Name, func(r string) string { return fmt.Sprintf("(CTL%02X)", r[0]) })
		marked[i] = &c
	}
	if err := writeFlatWorkbook(path, marked); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	mark := regexp.MustCompile(`\(CTL([0-9A-F]{2})\)`)
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		part, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		w, err := zw.Create(zf.Name)
		if err != nil {
			return err
		}
		w.Write(mark.ReplaceAll(part, []byte("_x00${1}_")))
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o600)
}

// TestHostileNamesRefusedFromWorkbooks: a plan name a spreadsheet would
// run as a formula, or holding ESC, CR or U+202E, read from any workbook
// form is an error at its cell in validate, and apply sends nothing;
// the same file with plain names applies.
func TestHostileNamesRefusedFromWorkbooks(t *testing.T) {
	e := newExEnv(t, nil)
	var names []string
	for _, h := range hostileServiceNames {
		names = append(names, h.name)
	}
	for _, form := range nameTextForms {
		t.Run(form.file, func(t *testing.T) {
			path := e.path("hostile-" + form.file)
			if err := form.write(path, nameTextPlans(names)); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := e.run("validate", path)
			out := stdout + stderr
			if code != ExitInvalid {
				t.Fatalf("validate: exit %d, want 2\n%s", code, out)
			}
			for _, h := range hostileServiceNames {
				if !nameErrorShown(out, h.name, h.want) {
					t.Errorf("validate does not name the cell of %q saying %q:\n%s", h.name, h.want, out)
				}
			}
			e.srv.Sandbox.ResetStats()
			code, stdout, stderr = e.run("apply", path, "--no-recalc")
			if st := e.srv.Sandbox.Stats(); code != ExitInvalid || st.Writes != 0 {
				t.Fatalf("apply: exit %d, %d writes; want 2 and none\n%s\n%s", code, st.Writes, stdout, stderr)
			}
			if !nameErrorShown(stdout+stderr, names[0], hostileServiceNames[0].want) {
				t.Errorf("apply does not name the cell:\n%s\n%s", stdout, stderr)
			}
			// A plan with a plain name applies (a long table names stored
			// plans only: one with its plan_id).
			plain := nameTextPlans([]string{"Plain " + form.file})
			if strings.HasPrefix(form.file, "long") {
				p, err := e.acme.CreatePlan(context.Background(), apiclient.PlanCreate{Name: plain[0].Name, StartDate: "2025-09-01", EndDate: "2030-08-31"})
				if err != nil {
					t.Fatal(err)
				}
				plain[0].PlanID = p.ID
			}
			clean := e.path("clean-" + form.file)
			if err := form.write(clean, plain); err != nil {
				t.Fatal(err)
			}
			if code, stdout, stderr := e.run("apply", clean, "--no-recalc"); code != 0 || e.srv.Sandbox.Stats().Writes == 0 {
				t.Fatalf("apply of plain names: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// nameErrorShown reports whether out holds an error at a plan_name cell
// (a CSV line and column, an XLSX cell) quoting name and saying want.
func nameErrorShown(out, name, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, want) && strings.Contains(line, "plan_name") && strings.Contains(line, strconv.Quote(name)) &&
			(strings.Contains(line, ", column ") || strings.Contains(line, "!")) {
			return true
		}
	}
	return false
}
