package formats

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/templates"
)

// TestReconcileReportsCarryClasses: a counter changed on the service is
// blue and a conflict red in the annotated copy, each comment naming the
// run; the CSV report carries the class and the last applied value.
func TestReconcileReportsCarryClasses(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "client.csv")
	os.WriteFile(src, []byte(rrCSV), 0o644)
	rec := rrReconciliation(src)
	cs := rec.Plans[0].Targets[0].Counters
	at := time.Date(2026, 10, 2, 8, 15, 0, 0, time.UTC)
	cs[0].Class, cs[0].LastApplied = diff.ClassService, &pipeline.LastWrite{Value: 5, RunID: 12, At: at}
	cs[1].Class, cs[1].LastApplied = diff.ClassBoth, &pipeline.LastWrite{Value: 3, RunID: 12, At: at}

	out := filepath.Join(dir, "report.xlsx")
	if _, err := reports.WriteReconcileXLSX(out, src, rec); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The Changes sheet names each class and the run in words.
	changes, _ := f.GetRows(reports.ChangesSheet)
	classes := map[string][2]string{}
	for _, row := range changes {
		if len(row) > 9 {
			classes[row[1]] = [2]string{row[8], row[9]}
		}
	}
	for cell, want := range map[string][2]string{
		"E2": {"changed on the service since run 12 on 2026-10-02 08:15 UTC", "run 12 on 2026-10-02 08:15 UTC: 5"},
		"F2": {"changed in both the file and on the service since run 12 on 2026-10-02 08:15 UTC (conflict)", "run 12 on 2026-10-02 08:15 UTC: 3"},
	} {
		if classes[cell] != want {
			t.Errorf("Changes row of %s: class and run %q, want %q", cell, classes[cell], want)
		}
	}
	rrCheckFits(t, f, reports.SummarySheet, 13)
	rrCheckFits(t, f, reports.ChangesSheet, 1)
	for ref, want := range map[string]string{"E2": templates.ServiceFill, "F2": templates.ConflictFill} {
		id, _ := f.GetCellStyle("client", ref)
		st, _ := f.GetStyle(id)
		if st == nil || len(st.Fill.Color) == 0 || rgbOf(st.Fill.Color[0]) != want {
			t.Errorf("%s fill %+v, want %s", ref, st, want)
		}
	}
	comments, _ := f.GetComments("client")
	found := false
	for _, c := range comments {
		if c.Cell == "E2" && strings.Contains(commentText(c), "changed on the service since run 12 on 2026-10-02 08:15 UTC") {
			found = true
		}
	}
	if !found {
		t.Errorf("E2's comment does not name the run: %+v", comments)
	}

	csvPath := filepath.Join(dir, "report.csv")
	if err := reports.WriteReconcileCSV(csvPath, rec); err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Open(csvPath)
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var got []string
	for _, r := range rows[1:] {
		if r[col["kind"]] == "counter" {
			got = append(got, r[col["class"]]+"/"+r[col["last_applied_value"]]+"/"+r[col["last_applied_run"]])
		}
	}
	if strings.Join(got, " ") != "changed_on_service/5/12 changed_in_both/3/12" {
		t.Errorf("CSV classes %v", got)
	}
}

// TestReconcileXLSXNamesEveryClass: the Summary sheet names the class of
// every differing counter, no history included (its cell shares the
// orange of "changed in the file", so the sheet must say which).
func TestReconcileXLSXNamesEveryClass(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "client.csv")
	os.WriteFile(src, []byte(rrCSV), 0o644)
	rec := rrReconciliation(src)
	cs := rec.Plans[0].Targets[0].Counters
	at := time.Date(2026, 10, 2, 8, 15, 0, 0, time.UTC)
	cs[0].Class, cs[0].LastApplied = diff.ClassFile, &pipeline.LastWrite{Value: 5, RunID: 12, At: at}
	cs[1].Class = diff.ClassNoHistory
	out := filepath.Join(dir, "report.xlsx")
	if _, err := reports.WriteReconcileXLSX(out, src, rec); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Summary")
	var notes []string
	for _, r := range rows {
		if len(r) > 12 && (r[8] == cs[0].Counter || r[8] == cs[1].Counter) {
			notes = append(notes, r[0]+" | "+r[11])
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "changed in the file") || !strings.Contains(notes[1], "no history") {
		t.Errorf("Summary rows of the two counters: %q", notes)
	}
}

// TestReconcileReportsCarryFieldClasses: a plan field changed on the
// service is blue in the annotated copy with a comment naming the value
// last applied and its run; the CSV and the Summary sheet carry the class
// and the last applied value.
func TestReconcileReportsCarryFieldClasses(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "client.csv")
	os.WriteFile(src, []byte(rrCSV), 0o644)
	rec := rrReconciliation(src)
	at := time.Date(2026, 10, 2, 8, 15, 0, 0, time.UTC)
	fd := &rec.Plans[0].Fields[0]
	fd.Location = &diff.Location{File: src, Line: 2, Column: 2}
	fd.Class, fd.LastApplied = diff.ClassService, &pipeline.LastFieldWrite{Value: "Manufacturing", RunID: 12, At: at, File: "v1.csv"}

	out := filepath.Join(dir, "report.xlsx")
	if _, err := reports.WriteReconcileXLSX(out, src, rec); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, _ := f.GetCellStyle("client", "B2")
	st, _ := f.GetStyle(id)
	if st == nil || len(st.Fill.Color) == 0 || rgbOf(st.Fill.Color[0]) != templates.ServiceFill {
		t.Errorf("B2 fill %+v, want %s", st, templates.ServiceFill)
	}
	// The field's Changes row: file and service values, class, run.
	want := []string{"client", "B2", "Acme 2026 (plan 17)", "", "", "sector", "Manufacturing", "Construction",
		"changed on the service since run 12 on 2026-10-02 08:15 UTC", `run 12 on 2026-10-02 08:15 UTC: "Manufacturing"`}
	changes, _ := f.GetRows(reports.ChangesSheet)
	if len(changes) < 2 || len(changes[1]) < len(want) || !slices.Equal(changes[1][:len(want)], want) {
		t.Errorf("Changes rows %q, want the field's first: %q", changes, want)
	}
	comments, _ := f.GetComments("client")
	found := false
	for _, c := range comments {
		if c.Cell == "B2" && strings.Contains(commentText(c), `eepipe last applied "Manufacturing" (run 12 on 2026-10-02 08:15 UTC): changed on the service since run 12`) {
			found = true
		}
	}
	if !found {
		t.Errorf("B2's comment does not name the value last applied: %+v", comments)
	}
	rows, err := f.GetRows("Summary")
	if err != nil {
		t.Fatal(err)
	}
	summary := false
	for _, r := range rows {
		line := strings.Join(r, "|")
		if strings.Contains(line, "changed on the service|") && strings.Contains(line, "sector") &&
			strings.Contains(line, `eepipe last applied "Manufacturing": changed on the service since run 12`) {
			summary = true
		}
	}
	if !summary {
		t.Errorf("the Summary lacks the classified field row:\n%v", rows)
	}

	csvPath := filepath.Join(dir, "report.csv")
	if err := reports.WriteReconcileCSV(csvPath, rec); err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Open(csvPath)
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var got []string
	for _, r := range recs[1:] {
		if r[col["kind"]] == "field" {
			got = append(got, r[col["name"]]+"/"+r[col["class"]]+"/"+r[col["last_applied_value"]]+"/"+r[col["last_applied_run"]]+"/"+r[col["last_applied_at"]])
		}
	}
	if strings.Join(got, " ") != "sector/changed_on_service/Manufacturing/12/2026-10-02T08:15:00Z" {
		t.Errorf("CSV field rows %v", got)
	}
}
