package formats

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// pdfWord is one word printed on a PDF page, its box in points.
type pdfWord struct {
	text                   string
	xMin, yMin, xMax, yMax float64
}

// pdfPage is one printed page: its size and words.
type pdfPage struct {
	width, height float64
	words         []pdfWord
}

// pdfTools returns the reason the print tests cannot run, or "" when
// LibreOffice and poppler's pdftotext are installed.
func pdfTools() string {
	for _, tool := range []string{"soffice", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not installed (packages libreoffice-calc-nogui and poppler-utils): the printed pages cannot be measured"
		}
	}
	return ""
}

var (
	pdfPageRE = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	pdfWordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// pdfWords reads every page's words with pdftotext -bbox.
func pdfWords(t *testing.T, pdf string) []pdfPage {
	t.Helper()
	b, err := exec.Command("pdftotext", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	var pages []pdfPage
	for _, line := range bytes.Split(b, []byte("\n")) {
		if m := pdfPageRE.FindSubmatch(line); m != nil {
			pages = append(pages, pdfPage{width: pdfNum(m[1]), height: pdfNum(m[2])})
			continue
		}
		if m := pdfWordRE.FindSubmatch(line); m != nil && len(pages) > 0 {
			p := &pages[len(pages)-1]
			p.words = append(p.words, pdfWord{text: string(m[5]), xMin: pdfNum(m[1]), yMin: pdfNum(m[2]), xMax: pdfNum(m[3]), yMax: pdfNum(m[4])})
		}
	}
	return pages
}

func pdfNum(b []byte) float64 {
	v, _ := strconv.ParseFloat(string(b), 64)
	return v
}

// pdfHeights returns the median and the smallest height of a page's words.
func pdfHeights(p pdfPage) (median, least float64) {
	if len(p.words) == 0 {
		return 0, 0
	}
	hs := make([]float64, len(p.words))
	for i, w := range p.words {
		hs[i] = w.yMax - w.yMin
	}
	slices.Sort(hs)
	return hs[len(hs)/2], hs[0]
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
	report := pipeline.CheckSector(inputs, nil, pipeline.DefaultSectorTargets())
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
		return reports.WriteHistoryReport(path, &reports.HistoryReport{
			Runs: []pipeline.RunRecord{{ID: 1, Started: at, User: "ann", Host: "lap", Status: "ok", Accounts: []string{"acme"}}},
			Entries: []pipeline.HistoryEntry{{Run: pipeline.RunRecord{ID: 1, Started: at, User: "ann"}, Account: "acme", PlanID: 17,
				TargetID: 1700, YearNumber: 1, TargetType: "all_employees", Counter: "number_of_african_male_top_managers",
				Before: &before, After: 5, Sent: true, Outcome: "ok", At: at, File: "v1.csv"}},
		})
	})
	add("changes.xlsx", func(path string) error {
		d := pipeline.Diff(inPlanForTest(), storedForTest(), pipeline.DiffOptions{})
		d.Account = "acme"
		s, err := pipeline.SaveChangeSet(&pipeline.ChangeSet{Plans: []*pipeline.PlanDiff{d}}, testSetService, []pipeline.InputFile{{Path: "v1.csv", SHA256: "ab"}}, at, pipeline.DefaultCatalog(), testSetKeys)
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

// printMinText is the smallest text, in points (the height of a word's
// box as pdftotext measures it), that a printed page may hold.
const printMinText = 7.0

// TestPrintedPagesReadable prints every workbook eepipe writes to PDF
// with LibreOffice, as an auditor would (A4, each sheet's own page setup),
// and measures every page: each has text, and no word on it is smaller
// than printMinText; a plan's charts print on pages without its tables,
// wide across the page. With EEPIPE_PRINT_OUT set, the PDFs are also
// saved in that folder (to look at: pdftoppm -png).
func TestPrintedPagesReadable(t *testing.T) {
	if why := pdfTools(); why != "" {
		t.Skip(why)
	}
	xs := printedWorkbooks(t, t.TempDir())
	for k, pdf := range printPDFs(t, xs) {
		name := filepath.Base(xs[k])
		if out := os.Getenv("EEPIPE_PRINT_OUT"); out != "" {
			if b, err := os.ReadFile(pdf); err == nil {
				_ = os.WriteFile(filepath.Join(out, filepath.Base(pdf)), b, 0o644)
			}
		}
		pages := pdfWords(t, pdf)
		if len(pages) == 0 {
			t.Errorf("%s: no printed page", name)
		}
		charts := 0
		for i, p := range pages {
			if len(p.words) == 0 {
				t.Errorf("%s page %d: blank", name, i+1)
				continue
			}
			var small []string
			text := make([]string, len(p.words))
			minX, maxX := p.width, 0.0
			for j, w := range p.words {
				text[j] = w.text
				if h := w.yMax - w.yMin; h < printMinText {
					small = append(small, fmt.Sprintf("%q %.1f pt", w.text, h))
				}
				minX, maxX = min(minX, w.xMin), max(maxX, w.xMax)
			}
			if len(small) > 0 {
				med, least := pdfHeights(p)
				t.Errorf("%s page %d: %d of %d words under %.0f pt (median %.1f, smallest %.1f): %s",
					name, i+1, len(small), len(p.words), printMinText, med, least, strings.Join(small[:min(len(small), 5)], ", "))
			}
			// A plan chart's page: its title, no grid, across most of
			// the page's width.
			all := strings.Join(text, " ")
			if name == "export.xlsx" && strings.Contains(all, "by race and gender") {
				charts++
				if strings.Contains(all, "Occupational level") {
					t.Errorf("%s page %d: a chart shares its page with a grid", name, i+1)
				}
				if maxX-minX < p.width/2 {
					t.Errorf("%s page %d: the chart spans %.0f of the page's %.0f pt", name, i+1, maxX-minX, p.width)
				}
			}
		}
		if name == "export.xlsx" && charts != 4 {
			t.Errorf("%s: %d pages of plan charts, want 4 (two plans, two charts each)", name, charts)
		}
	}
}
