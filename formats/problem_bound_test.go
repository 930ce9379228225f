package formats

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
)

// writeNoisyCSV writes rows rows of 90 counters whose disabled counters
// exceed the all-employees ones (costRow with noisy set).
func writeNoisyCSV(t *testing.T, path string, rows int) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(costHeader(90))
	for i := range rows {
		_ = w.Write(costRow(i, 90, true))
	}
	w.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBoundedProblems reads a file with hundreds of warnings of one kind:
// the text lists the first five with their cells and counts the rest; every
// report format lists every problem, the same as an unbounded read.
func TestBoundedProblems(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "noisy.csv")
	writeNoisyCSV(t, path, 20)
	full, err := ReadFiles([]string{path}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := len(full.Problems)
	if total < 300 || full.Problems.HasErrors() {
		t.Fatalf("the noisy file has %d problems (errors: %v); want hundreds of warnings", total, full.Problems.HasErrors())
	}

	spill, err := reports.NewProblemSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer spill.Close()
	bound := &pipeline.ProblemBound{Keep: 5, Overflow: spill.Add}
	b, err := ReadFiles([]string{path}, ReadOptions{Bound: bound})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Problems) != 5 || b.Count(pipeline.Warning) != total || spill.Len() != total-5 {
		t.Fatalf("kept %d, counted %d, spilled %d of %d", len(b.Problems), b.Count(pipeline.Warning), spill.Len(), total)
	}
	var text bytes.Buffer
	if err := reports.WriteProblemsText(&text, b); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if n := strings.Count(out, "\n"); n > 12 {
		t.Errorf("the text has %d lines:\n%s", n, out)
	}
	for _, want := range []string{
		"noisy.csv: 0 errors, " + thousands(total) + " warnings",
		"line 3, column 9 (number_of_african_male_top_managers): warning:",
		"… and " + thousands(total-5) + " more warnings: disabled above all employees",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}

	// Every report lists every problem, the ones set aside included.
	csvPath := filepath.Join(dir, "r.csv")
	if err := reports.WriteProblemReport(csvPath, b, spill); err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Open(csvPath)
	recs, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil || len(recs) != total+1 {
		t.Errorf("CSV report: %d rows (%v), want %d + header", len(recs), err, total)
	}
	fullPath := filepath.Join(dir, "full.csv")
	if err := reports.WriteProblemReport(fullPath, full); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(csvPath)
	fullCSV, _ := os.ReadFile(fullPath)
	if sortedLines(string(got)) != sortedLines(string(fullCSV)) {
		t.Errorf("the bounded CSV report does not hold the same problems as the unbounded one")
	}

	jsonPath := filepath.Join(dir, "r.json")
	if err := reports.WriteProblemReport(jsonPath, b, spill); err != nil {
		t.Fatal(err)
	}
	var rep reports.ProblemReport
	raw, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	if len(rep.Problems) != total || rep.Warnings != total || rep.Files[0].Warnings != total {
		t.Errorf("JSON report: %d problems, %d warnings, file %+v; want %d", len(rep.Problems), rep.Warnings, rep.Files, total)
	}

	xlsxPath := filepath.Join(dir, "r.xlsx")
	if err := reports.WriteProblemReport(xlsxPath, b, spill); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(xlsxPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Problems")
	if len(rows) != total+1 {
		t.Errorf("XLSX report: %d rows, want %d + header", len(rows), total)
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// thousands writes n with a comma between groups of three digits, as the
// problem texts count: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
