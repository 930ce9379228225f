package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

func vtRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:    func() time.Time { return time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC) },
		Getenv: func(string) string { return "" },
	}
	code = Execute(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func vtWrite(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const vtGoodCSV = `plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers
Acme,2025-09-01,2031-08-31,1,all_employees,3
`

func TestValidateGoodFileExitsZero(t *testing.T) {
	dir := t.TempDir()
	path := vtWrite(t, filepath.Join(dir, "good.csv"), vtGoodCSV)
	code, out, _ := vtRun(t, "validate", path)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0 (warnings allowed):\n%s", code, out)
	}
	if !strings.Contains(out, "warning: end_date 2031-08-31 is after 2030-08-31") || !strings.Contains(out, "1 file, 1 plan, 1 target: 0 errors, 1 warning") {
		t.Errorf("report:\n%s", out)
	}
}

func TestValidateBadFilesExitTwoWithReports(t *testing.T) {
	dir := t.TempDir()
	good := vtWrite(t, filepath.Join(dir, "good.csv"), vtGoodCSV)
	bad := vtWrite(t, filepath.Join(dir, "bad.csv"), "plan_id;year_number;target_type;number_of_african_male_top_managers\n7;1;all_employees;-2\n")
	for _, ext := range []string{"csv", "json", "xlsx"} {
		report := filepath.Join(dir, "problems."+ext)
		code, out, stderr := vtRun(t, "validate", good, bad, filepath.Join(dir, "missing.xlsx"), "--report", report)
		if code != ExitInvalid {
			t.Fatalf("exit %d, want 2:\n%s\n%s", code, out, stderr)
		}
		for _, want := range []string{"bad.csv: 1 error", "line 2, column 4 (number_of_african_male_top_managers): error:", "missing.xlsx: 1 error", "does not exist"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		switch ext {
		case "json":
			var r struct {
				Errors   int `json:"errors"`
				Warnings int `json:"warnings"`
				Problems []struct {
					File, Header, Value, Message string
					Line, Column                 int
				} `json:"problems"`
			}
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatal(err)
			}
			if r.Errors != 2 || r.Warnings != 1 || len(r.Problems) != 3 {
				t.Errorf("json report: %+v", r)
			}
		case "csv":
			data, _ := os.ReadFile(report)
			if !strings.HasPrefix(string(data), "severity,file,location,sheet,cell,row,line,column,header,value,message,suggestions\n") || !strings.Contains(string(data), `,2,4,number_of_african_male_top_managers,-2,`) {
				t.Errorf("csv report:\n%s", data)
			}
		case "xlsx":
			x, err := excelize.OpenFile(report)
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := x.GetRows("Problems")
			x.Close()
			if len(rows) != 4 || rows[0][0] != "Severity" {
				t.Errorf("xlsx report rows: %v", rows)
			}
		}
	}
}

func TestValidateAnnotate(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.xlsx")
	x := excelize.NewFile()
	_ = x.SetSheetName("Sheet1", "Targets")
	_ = x.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", "number_of_african_male_top_managers"})
	_ = x.SetSheetRow("Targets", "A2", &[]any{"Acme", "2025-09-01", "2031-08-31", 1, "all_employees", -5})
	if err := x.SaveAs(src); err != nil {
		t.Fatal(err)
	}
	x.Close()
	dst := filepath.Join(dir, "checked.xlsx")
	code, out, stderr := vtRun(t, "validate", src, "--annotate", dst)
	if code != ExitInvalid {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
	a, err := excelize.OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	comments, _ := a.GetComments("Targets")
	byCell := map[string]string{}
	for _, c := range comments {
		var b strings.Builder
		for _, r := range c.Paragraph {
			b.WriteString(r.Text)
		}
		byCell[c.Cell] = b.String() + c.Text
	}
	if !strings.Contains(byCell["F2"], "negative") || !strings.Contains(byCell["C2"], "clamp") {
		t.Errorf("comments = %v", byCell)
	}
	for cell, want := range map[string]string{"F2": "FFC7CE", "C2": "FFEB9C"} {
		id, _ := a.GetCellStyle("Targets", cell)
		st, _ := a.GetStyle(id)
		if st == nil || len(st.Fill.Color) == 0 || !strings.EqualFold(st.Fill.Color[0], want) {
			t.Errorf("%s fill = %+v, want %s", cell, st, want)
		}
	}
	if v, _ := a.GetCellValue("Targets", "F2"); v != "-5" {
		t.Errorf("values must be kept: F2 = %q", v)
	}
	rows, _ := a.GetRows("eepipe problems")
	if len(rows) != 3 {
		t.Errorf("problem sheet rows = %v", rows)
	}
}

func TestValidateUsageErrors(t *testing.T) {
	dir := t.TempDir()
	csv := vtWrite(t, filepath.Join(dir, "a.csv"), vtGoodCSV)
	cat := vtWrite(t, filepath.Join(dir, "cat.txt"), "not_a_counter\n")
	for name, args := range map[string][]string{
		"no files":         {"validate"},
		"annotate csv":     {"validate", csv, "--annotate", filepath.Join(dir, "x.xlsx")},
		"report extension": {"validate", csv, "--report", filepath.Join(dir, "x.txt")},
		"bad catalog":      {"validate", "--catalog", cat, csv},
	} {
		if code, out, stderr := vtRun(t, args...); code != ExitInvalid {
			t.Errorf("%s: exit %d, want 2\n%s%s", name, code, out, stderr)
		}
	}
}

func TestValidateCatalogFlag(t *testing.T) {
	dir := t.TempDir()
	cat := vtWrite(t, filepath.Join(dir, "cat.txt"), "number_of_african_male_top_managers\nnumber_of_african_male_apprentices\n")
	csv := vtWrite(t, filepath.Join(dir, "a.csv"), "plan_id,year_number,target_type,number_of_african_male_apprentices,number_of_white_male_top_managers\n3,1,all_employees,4,1\n")
	code, out, _ := vtRun(t, "validate", "--catalog", cat, csv)
	if code != ExitInvalid || strings.Contains(out, "apprentices\" is not") || !strings.Contains(out, `"number_of_white_male_top_managers" is not a counter of the catalog`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
