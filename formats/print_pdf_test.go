package formats

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
)

// pdfSpan is one run of text printed on a PDF page in one font: its
// text, its font size in points as the page prints it (the sheet's print
// scale applied) and its box.
type pdfSpan struct {
	Text string     `json:"t"`
	Size float64    `json:"s"`
	Box  [4]float64 `json:"b"` // x0, y0, x1, y1
}

// pdfPage is one printed page: its size and text.
type pdfPage struct {
	Width  float64   `json:"w"`
	Height float64   `json:"h"`
	Spans  []pdfSpan `json:"spans"`
}

// text returns the page's text with no white space: a cell's text wrapped
// over lines (or broken inside a word) reads whole in it.
func (p pdfPage) text() string {
	var b strings.Builder
	for _, s := range p.Spans {
		b.WriteString(strings.Join(strings.Fields(s.Text), ""))
	}
	return b.String()
}

// footer returns the sheet name LibreOffice prints at the bottom left of
// the page (the footer templates.SetPrintLayout sets: the name at the
// left, "Page N of M" at the right, on one line), or "".
func (p pdfPage) footer() string {
	for _, pg := range p.Spans {
		if !pdfPageNumber.MatchString(strings.TrimSpace(pg.Text)) {
			continue
		}
		name, x := "", pg.Box[0]
		for _, s := range p.Spans {
			if math.Abs(s.Box[1]-pg.Box[1]) < 1 && s.Box[0] < x {
				name, x = strings.TrimSpace(s.Text), s.Box[0]
			}
		}
		return name
	}
	return ""
}

var pdfPageNumber = regexp.MustCompile(`^Page \d+ of \d+$`)

// pdfScript prints, as JSON, every page of each PDF named on its command
// line with PyMuPDF: the size and box of every span of text.
const pdfScript = `
import json, sys, fitz
out = {}
for path in sys.argv[1:]:
    pages = []
    for page in fitz.open(path):
        spans = []
        for block in page.get_text("dict")["blocks"]:
            for line in block.get("lines", []):
                for s in line["spans"]:
                    if s["text"].strip():
                        spans.append({"t": s["text"], "s": s["size"], "b": list(s["bbox"])})
        pages.append({"w": page.rect.width, "h": page.rect.height, "spans": spans})
    out[path] = pages
json.dump(out, sys.stdout)
`

// pdfPython returns a Python interpreter that has PyMuPDF (Debian's
// python3-fitz), or "" and why there is none.
func pdfPython() (string, string) {
	var tried []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil || slices.Contains(tried, path) {
			continue
		}
		tried = append(tried, path)
		if exec.Command(path, "-c", "import fitz").Run() == nil {
			return path, ""
		}
	}
	return "", "no python3 with PyMuPDF (package python3-fitz): the printed type cannot be measured"
}

// pdfTools returns the reason the print tests cannot run, or "" when
// LibreOffice and PyMuPDF are installed, and the Python to run.
func pdfTools() (python, why string) {
	if _, err := exec.LookPath("soffice"); err != nil {
		return "", "soffice is not installed (package libreoffice-calc-nogui): the printed pages cannot be measured"
	}
	return pdfPython()
}

// pdfRead reads every page of each PDF with PyMuPDF, in one run.
func pdfRead(t *testing.T, python string, pdfs []string) map[string][]pdfPage {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-c", pdfScript}, pdfs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("reading the PDFs with PyMuPDF: %v: %s", err, stderr.String())
	}
	var out map[string][]pdfPage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("reading the PDFs with PyMuPDF: %v", err)
	}
	return out
}

// printedWorkbooks writes one of every workbook eepipe writes into dir
// and returns their paths: the grid export (Overview, plan sheets with
// charts, Sector targets), the flat export, the template (both layouts),
// the run, problem, history and check reports, the change set, the
// annotated copy and the reconcile report (the copy of a CSV and the
// streamed copy of an XLSX workbook, each with its Summary and Changes).
func printedWorkbooks(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	add := func(name string, write func(path string) error) string {
		path := filepath.Join(dir, name)
		if err := write(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, path)
		return path
	}
	plans := exExportPlans()
	var inputs []*pipeline.InputPlan
	for _, p := range plans {
		inputs = append(inputs, p.Plan)
	}
	report := sector.CheckSector(inputs, nil, sector.DefaultSectorTargets())
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	exported := add("export.xlsx", func(path string) error {
		return writeExportXLSX(path, plans, export.Options{GeneratedAt: at, Source: "https://ee.example.com",
			Sector: &export.Sector{Plans: report.Plans, Source: report.TargetsSource}})
	})
	add("export-flat.xlsx", func(path string) error {
		return export.WriteFlatXLSX(path, plans, export.Options{GeneratedAt: at})
	})
	for _, layout := range []string{templates.LayoutGrid, templates.LayoutFlat} {
		add("template-"+layout+".xlsx", func(path string) error {
			wb, err := templates.New(templates.Options{Layout: layout})
			if err != nil {
				return err
			}
			defer wb.Close()
			return xlsx.WriteWorkbook(path, wb)
		})
	}
	add("run.xlsx", func(path string) error { return reports.WriteRunReport(path, sampleRunReport()) })
	batch, err := ReadFiles([]string{exported}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	batch.Problems = append(batch.Problems, pipeline.Problem{Severity: pipeline.Error, Message: "made up",
		Origin: pipeline.Origin{File: exported, Sheet: "Acme 2026", Cell: "B5", Row: 5, Column: 2}})
	add("problems.xlsx", func(path string) error { return reports.WriteProblemReport(path, batch) })
	add("annotated.xlsx", func(path string) error {
		_, err := reports.AnnotateWorkbook(exported, path, batch.Problems)
		return err
	})
	add("check.xlsx", func(path string) error { return reports.WriteSectorReport(path, report) })
	add("history.xlsx", func(path string) error {
		before := int64(1)
		run := pipeline.RunRecord{ID: 1, Started: at, Finished: at.Add(time.Minute), User: "ann", Host: "lap", Status: "ok",
			Accounts: []string{"acme"}, Service: "https://ee.example.com/api/v1", Command: "eepipe apply --config /etc/eepipe/config.yaml clients/acme/v1.csv",
			Files:     []pipeline.InputFile{{Path: "clients/acme/v1.csv", SHA256: strings.Repeat("ab", 32)}},
			ChangeSet: "sha256:" + strings.Repeat("cd", 32)}
		return reports.WriteHistoryReport(path, &reports.HistoryReport{
			Runs: []pipeline.RunRecord{run},
			Entries: []pipeline.HistoryEntry{{Run: run, Account: "acme", PlanID: 17, PlanName: "Acme 2026", FinancialYear: "2026/27",
				TargetID: 1700, YearNumber: 1, TargetType: "all_employees", Counter: "number_of_coloured_female_total_permanent_employees",
				Before: &before, After: 5, Sent: true, Outcome: "ok", At: at, File: "clients/acme/v1.csv"}},
			PlanWrites: []pipeline.PlanWriteEntry{{RunID: 1, PlanWrite: pipeline.PlanWrite{Account: "acme", PlanID: 17, PlanName: "Acme 2026",
				Action: "update", Outcome: "ok", At: at}}},
		})
	})
	add("changes.xlsx", func(path string) error {
		d := diff.Diff(inPlanForTest(), storedForTest(), diff.DiffOptions{})
		d.Account = "acme"
		s, err := savedset.SaveChangeSet(&diff.ChangeSet{Plans: []*diff.PlanDiff{d}}, testSetService, []pipeline.InputFile{{Path: "v1.csv", SHA256: "ab"}}, at, pipeline.DefaultCatalog(), testSetKeys)
		if err != nil {
			return err
		}
		return reports.WriteChangeSet(path, s)
	})
	src := filepath.Join(dir, "client.csv")
	if err := os.WriteFile(src, []byte(rrCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	add("reconcile-csv.xlsx", func(path string) error { return rrWriteXLSX(path, src, rrReconciliation(src)) })
	// The copy of a flat CSV (hundreds of columns), a counter marked.
	flat := filepath.Join(dir, "flat.csv")
	if err := table.WriteFlatCSV(flat, inputs, nil); err != nil {
		t.Fatal(err)
	}
	add("reconcile-flatcsv.xlsx", func(path string) error {
		return rrWriteXLSX(path, flat, rrMarksReconciliation(flat, [][2]string{{"flat", "P2"}}))
	})
	// The streamed copy of an XLSX workbook: the export, two counters marked.
	add("reconcile-xlsx.xlsx", func(path string) error {
		return rrWriteXLSX(path, exported, rrMarksReconciliation(exported, [][2]string{{"Acme 2026", "B17"}, {"Acme 2026", "C18"}}))
	})
	return out
}

// printPDFs prints each workbook to a PDF with one LibreOffice run and
// returns the PDFs' paths, in order.
func printPDFs(t *testing.T, xlsx []string) []string {
	t.Helper()
	out := t.TempDir()
	profile := t.TempDir() // a profile of its own: soffice refuses to share one
	args := append([]string{"-env:UserInstallation=file://" + profile, "--headless", "--norestore", "--convert-to", "pdf", "--outdir", out}, xlsx...)
	// A stuck LibreOffice fails the test rather than the package's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "soffice", args...)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v: %s", err, b)
	}
	var pdfs []string
	for _, x := range xlsx {
		pdf := filepath.Join(out, strings.TrimSuffix(filepath.Base(x), filepath.Ext(x))+".pdf")
		if _, err := os.Stat(pdf); err != nil {
			t.Fatalf("soffice wrote no PDF for %s: %v", filepath.Base(x), err)
		}
		pdfs = append(pdfs, pdf)
	}
	return pdfs
}

// printMinText is the smallest font size, in points, set on a printed
// page: the size PyMuPDF reads off the PDF, where the sheet's print
// scaling (fitting a sheet to the page's width shrinks its fonts) is
// already applied.
const printMinText = 7.0

// TestPrintedPagesReadable prints every workbook eepipe writes to PDF
// with LibreOffice, as an auditor would (A4, each sheet's own page setup),
// and measures every page with PyMuPDF: each has text, no font on it is
// smaller than printMinText; a plan's charts print on pages without its
// tables, wide across the page; and the reports print each row whole on
// one page (printRowsWhole). With EEPIPE_PRINT_OUT set, the PDFs are also
// saved in that folder (to look at: pdftoppm -png).
func TestPrintedPagesReadable(t *testing.T) {
	python, why := pdfTools()
	if why != "" {
		t.Skip(why)
	}
	xs := printedWorkbooks(t, t.TempDir())
	pdfs := printPDFs(t, xs)
	read := pdfRead(t, python, pdfs)
	for k, pdf := range pdfs {
		name := filepath.Base(xs[k])
		if out := os.Getenv("EEPIPE_PRINT_OUT"); out != "" {
			if b, err := os.ReadFile(pdf); err == nil {
				_ = os.WriteFile(filepath.Join(out, filepath.Base(pdf)), b, 0o644)
			}
		}
		pages := read[pdf]
		if len(pages) == 0 {
			t.Errorf("%s: no printed page", name)
		}
		charts := 0
		for i, p := range pages {
			if len(p.Spans) == 0 {
				t.Errorf("%s page %d: blank", name, i+1)
				continue
			}
			printFontSizes(t, name, i+1, p)
			if name == "export.xlsx" && printChartPage(t, name, i+1, p) {
				charts++
			}
		}
		if name == "export.xlsx" && charts != 4 {
			t.Errorf("%s: %d pages of plan charts, want 4 (two plans, two charts each)", name, charts)
		}
		printRowsWhole(t, xs[k], pages)
	}
}

// printFontSizes reports the spans of a page set in a font under
// printMinText.
func printFontSizes(t *testing.T, name string, page int, p pdfPage) {
	t.Helper()
	var small []string
	least := math.Inf(1)
	for _, s := range p.Spans {
		least = min(least, s.Size)
		if s.Size < printMinText-0.005 {
			small = append(small, fmt.Sprintf("%q %.2f pt", s.Text, s.Size))
		}
	}
	if len(small) > 0 {
		t.Errorf("%s page %d (%s): %d of %d runs of text set under %.0f pt (smallest %.2f): %s",
			name, page, p.footer(), len(small), len(p.Spans), printMinText, least, strings.Join(small[:min(len(small), 5)], ", "))
	}
}

// printChartPage reports whether a page is a plan chart's (its title:
// "by race and gender"), and that such a page holds no grid and spans
// most of the page's width.
func printChartPage(t *testing.T, name string, page int, p pdfPage) bool {
	t.Helper()
	var text []string
	minX, maxX := p.Width, 0.0
	for _, s := range p.Spans {
		text = append(text, s.Text)
		if s.Box[1] < p.Height*0.9 { // not the footer
			minX, maxX = min(minX, s.Box[0]), max(maxX, s.Box[2])
		}
	}
	all := strings.Join(text, " ")
	if !strings.Contains(all, "by race and gender") {
		return false
	}
	if strings.Contains(all, "Occupational level") {
		t.Errorf("%s page %d: a chart shares its page with a grid", name, page)
	}
	if maxX-minX < p.Width/2 {
		t.Errorf("%s page %d: the chart spans %.0f of the page's %.0f pt", name, page, maxX-minX, p.Width)
	}
	return true
}
