package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/apiclient"
)

// TestExportEditedRowsRouteOrFail: a flat CSV export of a
// configuration whose accounts name only company_id, edited as a user
// would: a plan_id that no account holds (the plan's name and start date
// unchanged, the account column kept) is an error for that plan, never the
// plan of the same name; an account column that disagrees with the company
// columns is an error; an edited counter is exactly one write.
func TestExportEditedRowsRouteOrFail(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	e.createPlans(e.acme, "Acme", 1)
	e.createPlans(blue, "Blue Crane", 1)
	cfg := e.companyIDOnlyConfig()
	out := e.path("flat.csv")
	if code, stdout, stderr := e.run("--config", cfg, "export", "-o", out); code != 0 {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		i := slices.Index(rows[0], name)
		if i < 0 {
			t.Fatalf("the export has no column %s: %v", name, rows[0])
		}
		return i
	}
	edited := func(name string, edit func(row []string)) string {
		p := e.path(name)
		var b strings.Builder
		w := csv.NewWriter(&b)
		for i, r := range rows {
			r = slices.Clone(r)
			if i > 0 {
				edit(r)
			}
			_ = w.Write(r)
		}
		w.Flush()
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	isBlue := func(r []string) bool { return r[col("account")] == "bluecrane" }

	for _, tc := range []struct {
		name   string
		edit   func(r []string)
		code   int
		writes int64
		want   string
	}{
		{"plan-id-held-by-none.csv", func(r []string) {
			if isBlue(r) {
				r[col("plan_id")] = "99999"
			}
		}, ExitDiff, 0, "plan 99999 is not on account bluecrane"},
		{"account-disagrees.csv", func(r []string) {
			if isBlue(r) {
				r[col("company_vat_number")] = exAcmeVAT
			}
		}, ExitDiff, 0, "the account column names account bluecrane, whose company is Q2wE9z, but the company columns name"},
		{"one-counter.csv", func(r []string) {
			if isBlue(r) && r[col("year_number")] == "1" && r[col("target_type")] == "all_employees" {
				r[col("number_of_african_male_top_managers")] = "777"
			}
		}, 0, 1, "1 counter to change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := edited(tc.name, tc.edit)
			code, stdout, stderr := e.run("--config", cfg, "apply", "--dry-run", p)
			if !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("dry run (exit %d) lacks %q\n%s\n%s", code, tc.want, stdout, stderr)
			}
			e.srv.Sandbox.ResetStats()
			code, stdout, stderr = e.run("--config", cfg, "apply", "--no-recalc", p)
			if st := e.srv.Sandbox.Stats(); code != tc.code || st.Writes != tc.writes {
				t.Fatalf("apply: exit %d, %d writes; want exit %d, %d writes\n%s\n%s", code, st.Writes, tc.code, tc.writes, stdout, stderr)
			}
			if tc.writes == 0 && !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("apply output lacks %q\n%s\n%s", tc.want, stdout, stderr)
			}
		})
	}
}

// TestUnknownAccountCitedAtItsCell: an account name no configuration has
// is an error at the cell that gives it: the account column of a CSV row,
// the value beside a grid sheet's Account label.
func TestUnknownAccountCitedAtItsCell(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	e.createPlans(blue, "Blue Crane", 1)
	cfg := e.companyIDOnlyConfig()

	csvPath := e.path("zed.csv")
	if err := os.WriteFile(csvPath, []byte("plan_id,account,year_number,target_type,number_of_african_male_top_managers\n1,zed,1,all_employees,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := e.run("--config", cfg, "validate", csvPath)
	if code != ExitInvalid || !strings.Contains(stdout, `line 2, column 2 (account): error: plan 1 names account "zed", which is not configured`) {
		t.Errorf("csv: exit %d\n%s\n%s", code, stdout, stderr)
	}

	grid := e.path("grid.xlsx")
	if code, stdout, stderr := e.run("--config", cfg, "export", "-o", grid, "--no-charts"); code != 0 {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout, stderr)
	}
	wb, err := excelize.OpenFile(grid)
	if err != nil {
		t.Fatal(err)
	}
	ref := ""
	for _, sheet := range wb.GetSheetList() {
		rows, err := wb.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			for c, v := range row {
				if v == "Account" && c+1 < len(row) && row[c+1] == "bluecrane" && ref == "" {
					cell, _ := excelize.CoordinatesToCellName(c+2, r+1)
					ref = sheet + "!" + cell
					if err := wb.SetCellStr(sheet, cell, "bluecrain"); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	if ref == "" {
		t.Fatal("the grid export has no Account label with bluecrane beside it")
	}
	if err := wb.Save(); err != nil {
		t.Fatal(err)
	}
	wb.Close()
	code, stdout, stderr = e.run("--config", cfg, "validate", grid)
	if code != ExitInvalid || !strings.Contains(stdout, ref+` (account): error:`) || !strings.Contains(stdout, `names account "bluecrain", which is not configured`) {
		t.Errorf("grid: exit %d, want the error at %s\n%s\n%s", code, ref, stdout, stderr)
	}
}

// TestCheckServerHonoursAccountColumn: two accounts hold a plan of the
// same name and start date; a file row naming one account is matched, as
// apply routes it, to that account's plan only (check --server used to
// call it ambiguous across both accounts).
func TestCheckServerHonoursAccountColumn(t *testing.T) {
	e := newExEnv(t, nil)
	blue := e.client("mpk_sandbox_bluecrane", "sandbox-secret-bluecrane")
	var blueID int64
	for _, c := range []*apiclient.Client{e.acme, blue} {
		p, err := c.CreatePlan(context.Background(), apiclient.PlanCreate{Name: "Same plan", StartDate: "2026-09-01", EndDate: "2027-08-31", Sector: "Construction"})
		if err != nil {
			t.Fatal(err)
		}
		blueID = p.ID
	}
	cfg := e.companyIDOnlyConfig()
	file := e.path("same.csv")
	if err := os.WriteFile(file, []byte("account,plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers\nbluecrane,Same plan,2026-09-01,2027-08-31,1,all_employees,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := e.run("--config", cfg, "check", "--server", file)
	if want := fmt.Sprintf("blank values filled from plan %d on the service (account bluecrane)", blueID); !strings.Contains(stdout, want) || strings.Contains(stdout, "matches several") {
		t.Errorf("check --server: exit %d, want %q\n%s\n%s", code, want, stdout, stderr)
	}
	code, stdout, stderr = e.run("--config", cfg, "apply", "--dry-run", file)
	if code != 0 || !strings.Contains(stdout, "1 unchanged") {
		t.Errorf("apply --dry-run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
