package formats

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
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
	cs[0].Class, cs[0].LastApplied = pipeline.ClassService, &pipeline.LastWrite{Value: 5, RunID: 12, At: at}
	cs[1].Class, cs[1].LastApplied = pipeline.ClassBoth, &pipeline.LastWrite{Value: 3, RunID: 12, At: at}

	out := filepath.Join(dir, "report.xlsx")
	if err := WriteReconcileXLSX(out, src, rec); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for ref, want := range map[string]string{"E2": ServiceFillColor, "F2": ConflictFillColor} {
		id, _ := f.GetCellStyle("client", ref)
		st, _ := f.GetStyle(id)
		if st == nil || len(st.Fill.Color) == 0 || rgbOf(st.Fill.Color[0]) != want {
			t.Errorf("%s fill %+v, want %s", ref, st, want)
		}
	}
	comments, _ := f.GetComments("client")
	found := false
	for _, c := range comments {
		if c.Cell == "E2" && strings.Contains(CommentText(c), "changed on the service since run 12 on 2026-10-02 08:15 UTC") {
			found = true
		}
	}
	if !found {
		t.Errorf("E2's comment does not name the run: %+v", comments)
	}

	csvPath := filepath.Join(dir, "report.csv")
	if err := WriteReconcileCSV(csvPath, rec); err != nil {
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
	cs[0].Class, cs[0].LastApplied = pipeline.ClassFile, &pipeline.LastWrite{Value: 5, RunID: 12, At: at}
	cs[1].Class = pipeline.ClassNoHistory
	out := filepath.Join(dir, "report.xlsx")
	if err := WriteReconcileXLSX(out, src, rec); err != nil {
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
			notes = append(notes, r[0]+" | "+r[12])
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "changed in the file") || !strings.Contains(notes[1], "no history") {
		t.Errorf("Summary rows of the two counters: %q", notes)
	}
}
