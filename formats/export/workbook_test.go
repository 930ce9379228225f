package export_test

import (
	"archive/zip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"pgregory.net/rapid"

	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/internal/books"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

func TestExportWorkbookLayout(t *testing.T) {
	plans := books.ExportPlans()
	path := filepath.Join(t.TempDir(), "plans.xlsx")
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	if err := books.WriteExport(path, plans, export.Options{GeneratedAt: at, Source: "http://127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if sheets[0] != export.OverviewSheet || f.GetActiveSheetIndex() != 0 {
		t.Fatalf("sheets %v (active %d), want the Overview first and active", sheets, f.GetActiveSheetIndex())
	}
	if vis, _ := f.GetSheetVisible(export.ChartDataSheet); vis {
		t.Error("the chart data sheet is visible")
	}
	rows, err := f.GetRows(export.OverviewSheet)
	if err != nil {
		t.Fatal(err)
	}
	hr := overviewHeaderRow(t, rows)
	header := rows[hr-1]
	for _, h := range []string{"Sheet", "Plan no.", "Company", "Company VAT", "Name", "Starts", "Ends", "Sector", "Scorecard linked", "Era", "Milestones", "Targets"} {
		if !slices.Contains(header, h) {
			t.Errorf("Overview header %v lacks %q", header, h)
		}
	}
	col := func(h string) int { return slices.Index(header, h) }
	var planSheets []string
	for i, p := range plans {
		r := rows[hr+i]
		want := map[string]string{
			"Plan no.": fmt.Sprint(p.Plan.PlanID), "Name": p.Plan.Name, "Company VAT": "0412345678",
			"Starts": p.Plan.StartDate.String(), "Ends": "2030-08-31", "Era": "2025 onwards",
			"Company": "Acme Foods (Pty) Ltd", "Targets": fmt.Sprint(len(p.Plan.Targets)), "Milestones": fmt.Sprint(p.Milestones),
		}
		for h, v := range want {
			if got := r[col(h)]; got != v {
				t.Errorf("Overview row %d %s = %q, want %q", i+1, h, got, v)
			}
		}
		sheet := r[col("Sheet")]
		planSheets = append(planSheets, sheet)
		ref, _ := excelize.CoordinatesToCellName(col("Sheet")+1, hr+1+i)
		if ok, target, _ := f.GetCellHyperLink(export.OverviewSheet, ref); !ok || !strings.Contains(target, sheet) {
			t.Errorf("Overview %s links to %q, want the plan's sheet %q", ref, target, sheet)
		}
		if !slices.Contains(sheets, sheet) {
			t.Errorf("no sheet %q", sheet)
		}
	}
	panes, err := f.GetPanes(export.OverviewSheet)
	if err != nil || !panes.Freeze || panes.YSplit != hr {
		t.Errorf("Overview panes %+v, want the header frozen", panes)
	}

	// Two charts per plan, titled, on the plan's sheet; their data matches
	// the plan's counters.
	charts := exChartTitles(t, path)
	if len(charts) != 2*len(plans) {
		t.Fatalf("%d charts, want %d: %v", len(charts), 2*len(plans), charts)
	}
	for _, p := range plans {
		for _, tt := range []string{"all employees", "employees with disabilities"} {
			title := p.Plan.Name + ": " + tt + " by race and gender"
			if !slices.Contains(charts, title) {
				t.Errorf("no chart %q in %v", title, charts)
			}
		}
	}
	data, _ := f.GetRows(export.ChartDataSheet)
	// First block: plan 1, all employees; header row 2, year 1 row 3.
	if data[1][1] != "African male" || data[2][0] != "2026/27" {
		t.Fatalf("chart data header %v / %v", data[1], data[2])
	}
	var sum int64
	t1 := plans[0].Plan.Targets[0]
	for _, l := range pipeline.OccupationalLevels {
		sum += t1.Counters.Map()[pipeline.CounterName("african", "male", l)]
	}
	if data[2][1] != fmt.Sprint(sum) {
		t.Errorf("chart data African male year 1 = %s, want %d", data[2][1], sum)
	}

	// And the workbook reads back as the plans.
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil || batch.Problems.HasErrors() {
		t.Fatalf("re-read: %v %v", err, batch.Problems)
	}
	if len(batch.Plans) != len(plans) {
		t.Fatalf("re-read %d plans", len(batch.Plans))
	}
	for _, sheet := range planSheets {
		if p, err := f.GetPanes(sheet); err != nil || !p.Freeze {
			t.Errorf("plan sheet %s: panes %+v, want frozen labels", sheet, p)
		}
	}
}

// exChartTitles returns the titles of the workbook's charts (from the
// chart parts of the package).
func exChartTitles(t *testing.T, path string) []string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var titles []string
	for _, zf := range zr.File {
		if !strings.HasPrefix(zf.Name, "xl/charts/chart") {
			continue
		}
		rc, _ := zf.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		s := string(b)
		i := strings.Index(s, "<a:t>")
		j := strings.Index(s, "</a:t>")
		if i < 0 || j < i {
			titles = append(titles, "")
			continue
		}
		titles = append(titles, strings.NewReplacer("&amp;", "&", "&#39;", "'", "&quot;", `"`).Replace(s[i+5:j]))
	}
	return titles
}

func TestFlatExportXLSX(t *testing.T) {
	plans := books.ExportPlans()
	path := filepath.Join(t.TempDir(), "flat.xlsx")
	if err := export.WriteFlatXLSX(path, plans, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sheets := f.GetSheetList()
	f.Close()
	if !slices.Equal(sheets, []string{export.OverviewSheet, "Targets"}) {
		t.Fatalf("sheets %v", sheets)
	}
	batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
	if err != nil || batch.Problems.HasErrors() {
		t.Fatalf("re-read: %v %v", err, batch.Problems)
	}
	for i, p := range batch.Plans {
		want := plans[i].Plan
		if p.PlanID != want.PlanID || p.Company != want.Company || len(p.Targets) != len(want.Targets) {
			t.Fatalf("plan %d read back as %+v", i, p)
		}
		for j, tg := range p.Targets {
			for n, v := range want.Targets[j].Counters.All() {
				if tg.Counters.Map()[n] != v {
					t.Fatalf("plan %d target %d %s = %d, want %d", i, j, n, tg.Counters.Map()[n], v)
				}
			}
		}
	}
}

// exFailingWriter fails after limit bytes, as a full disk would.
type exFailingWriter struct {
	w     io.Writer
	limit int
}

func (fw *exFailingWriter) Write(b []byte) (int, error) {
	if len(b) > fw.limit {
		n, _ := fw.w.Write(b[:fw.limit])
		fw.limit = 0
		return n, errors.New("no space left on device")
	}
	fw.limit -= len(b)
	return fw.w.Write(b)
}

// TestExportWriteFailureLeavesNoFile: an export whose writing fails half
// way leaves neither a partial file under the final name nor a temporary
// file, and the previous export stays as it was.
func TestExportWriteFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plans.xlsx")
	wb, err := export.NewWorkbook(books.ExportPlans(), export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	err = xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := wb.WriteTo(&exFailingWriter{w: w, limit: 20000})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}

	// With a previous export in place, a failing export keeps it.
	if err := os.WriteFile(path, []byte("previous export"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := books.ExportPlans()
	bad[1].Plan.Targets[0].Counters.Put("number_of_martian_male_top_managers", 1)
	if err := books.WriteExport(path, bad, export.Options{}); err == nil {
		t.Fatal("an export with a counter outside the catalog was written")
	}
	if err := export.WriteFlatXLSX(path, bad, export.Options{}); err == nil {
		t.Fatal("a flat export with a counter outside the catalog was written")
	}
	if b, _ := os.ReadFile(path); string(b) != "previous export" {
		t.Fatalf("the previous export was replaced: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestExportRoundTripProperty: any plans exported (grid and flat XLSX) read
// back as the same plans: ids, company identifiers, metadata and every
// counter.
func TestExportRoundTripProperty(t *testing.T) {
	// Each case writes and reads two workbooks: keep the count modest
	// unless -rapid.checks asks for more.
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		f.Value.Set("12")
		defer f.Value.Set(f.DefValue)
	}
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(rt, "plans")
		var plans []export.Plan
		for i := range n {
			start := pipeline.FinancialYear(rapid.IntRange(2025, 2029).Draw(rt, "fy")).Start()
			sp := &pipeline.Plan{ID: int64(100 + i), Name: rapid.StringMatching(`[A-Za-z0-9][A-Za-z0-9 &'/()-]{0,30}`).Draw(rt, "name"),
				StartDate: start, EndDate: pipeline.LatestEnd, Era: pipeline.EraPost2025,
				Sector:      rapid.SampledFrom(append([]string{""}, pipeline.Sectors...)).Draw(rt, "sector"),
				ScorecardID: rapid.SampledFrom([]string{"", "scorecard_acme_2025"}).Draw(rt, "scorecard")}
			for y, fy := range pipeline.PlanYears(sp.StartDate, sp.EndDate) {
				m := pipeline.Milestone{ID: sp.ID*10 + int64(y), YearNumber: y + 1, StartDate: fy.Start(), EndDate: fy.End()}
				for _, tt := range pipeline.TargetTypes {
					c := map[string]int64{}
					for _, name := range pipeline.DefaultCatalog().Names() {
						c[name] = rapid.Int64Range(0, 5000).Draw(rt, "v")
					}
					m.Targets = append(m.Targets, pipeline.Target{TargetType: tt, Counters: pipeline.CountersOf(c)})
				}
				sp.Milestones = append(sp.Milestones, m)
			}
			ids := pipeline.CompanyIDs{
				VAT:          rapid.StringMatching(`0?[0-9]{9}`).Draw(rt, "vat"),
				Registration: rapid.SampledFrom([]string{"", "2009/012345/07"}).Draw(rt, "reg"),
			}
			plans = append(plans, export.Plan{Plan: pipeline.FromServer(sp, ids)})
		}
		for _, layout := range []string{"grid", "flat"} {
			path := filepath.Join(dir, layout+".xlsx")
			var err error
			if layout == "grid" {
				err = books.WriteExport(path, plans, export.Options{NoCharts: true})
			} else {
				err = export.WriteFlatXLSX(path, plans, export.Options{})
			}
			if err != nil {
				rt.Fatal(err)
			}
			batch, err := formats.ReadFiles([]string{path}, formats.ReadOptions{})
			if err != nil || batch.Problems.HasErrors() {
				rt.Fatalf("%s: %v %v", layout, err, batch.Problems)
			}
			if len(batch.Plans) != len(plans) {
				rt.Fatalf("%s: %d plans read, want %d", layout, len(batch.Plans), len(plans))
			}
			for i, got := range batch.Plans {
				want := plans[i].Plan
				if got.PlanID != want.PlanID || got.Company != want.Company || strings.TrimSpace(got.Name) != strings.TrimSpace(want.Name) ||
					got.StartDate != want.StartDate || got.EndDate != want.EndDate || got.Sector != want.Sector || got.ScorecardID != want.ScorecardID {
					rt.Fatalf("%s: plan %d read as %+v, want %+v", layout, i, got, want)
				}
				if len(got.Targets) != len(want.Targets) {
					rt.Fatalf("%s: plan %d has %d targets, want %d", layout, i, len(got.Targets), len(want.Targets))
				}
				for j, tg := range got.Targets {
					w := want.Targets[j]
					if y, _ := tg.Year(got.StartDate); y != w.YearNumber || tg.TargetType != w.TargetType {
						rt.Fatalf("%s: target %d is year %d %s, want %d %s", layout, j, y, tg.TargetType, w.YearNumber, w.TargetType)
					}
					for name, v := range w.Counters.All() {
						if tg.Counters.Map()[name] != v {
							rt.Fatalf("%s: plan %d target %d %s = %d, want %d", layout, i, j, name, tg.Counters.Map()[name], v)
						}
					}
				}
			}
		}
	})
}

// overviewHeaderRow returns the (1-based) row of the Overview table's
// header among an Overview sheet's rows: the row whose first cells are
// Sheet and Plan no.
func overviewHeaderRow(t *testing.T, rows [][]string) int {
	t.Helper()
	for i, r := range rows {
		if len(r) > 1 && r[0] == "Sheet" && r[1] == "Plan no." {
			return i + 1
		}
	}
	t.Fatalf("no Overview header in %q", rows)
	return 0
}
