package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// SectorSheetName is the name of the worksheet AddSectorSheet adds.
const SectorSheetName = "Sector targets"

// sectorLevelLabels name the levels with sector targets for people.
var sectorLevelLabels = map[string]string{
	"top_managers":    "top management",
	"senior_managers": "senior management",
	"middle_managers": "middle management",
	"junior_managers": "junior management",
}

// disabilityLabel names the whole-workforce disability row.
const disabilityLabel = "people with disabilities (all levels)"

func sectorLevelLabel(level string) string {
	if l, ok := sectorLevelLabels[level]; ok {
		return l
	}
	return level
}

// WriteSectorReport writes a sector check report to path, as JSON, CSV or
// XLSX by the file name's extension, through WriteFileAtomic. The XLSX
// report opens on the CheckPrintSheet, laid out to print, followed by the
// wide Sector targets sheet with every figure and the charts.
func WriteSectorReport(path string, r *pipeline.SectorCheckReport) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return WriteSectorJSON(w, r) })
	case ".csv":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return WriteSectorCSV(w, r) })
	case ".xlsx":
		f := excelize.NewFile()
		defer f.Close()
		// First the sheet to print, then every figure in one wide table
		// (with the charts) for filters.
		if err := addCheckPrintSheet(f, r.Plans, r.TargetsSource); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := AddSectorSheet(f, r.Plans, r.TargetsSource); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.DeleteSheet("Sheet1"); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if idx, err := f.GetSheetIndex(CheckPrintSheet); err == nil {
			f.SetActiveSheet(idx)
		}
		return xlsx.WriteWorkbook(path, f)
	}
	return fmt.Errorf("report %s: use a .json, .csv or .xlsx file name", path)
}

// WriteSectorJSON writes the report as indented JSON: the notice, the file
// the figures came from, the caveat, and every plan, year and level.
func WriteSectorJSON(w io.Writer, r *pipeline.SectorCheckReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// sectorCSVHeader is the header of the CSV report: one row per plan, year,
// level and measure (designated_male, designated_female, disabled).
var sectorCSVHeader = []string{
	"source", "account", "plan_id", "plan_name", "company_vat_number", "company_registration_number", "company_id_number",
	"sector", "year_number", "financial_year", "final_year", "level", "measure", "status",
	"headcount", "count", "actual_pct", "target_pct", "short_points", "short_people", "reason",
	"targets_notice", "targets_file",
}

// WriteSectorCSV writes the report as a tidy CSV table: one row per plan,
// year, level and measure. Every row names the notice (with the advice to
// check the figures against the gazette) and the file the figures came from.
func WriteSectorCSV(w io.Writer, r *pipeline.SectorCheckReport) error {
	cw := table.NewCSVWriter(w)
	notice := r.Notice + " (check the figures against the gazette)"
	if err := cw.Write(sectorCSVHeader); err != nil {
		return err
	}
	for _, p := range r.Plans {
		base := []string{p.Source, p.Account, sectorIDText(p.PlanID), p.Name, p.Company.VAT, p.Company.Registration, p.Company.IDNumber, p.Sector}
		row := func(year *pipeline.SectorYearCheck, level, measure string, status pipeline.SectorStatus, headcount *int64, s *pipeline.ShareResult, target *pipeline.Pct, reason string) error {
			rec := append([]string(nil), base...)
			if year != nil {
				rec = append(rec, strconv.Itoa(year.YearNumber), sectorFYText(year.FinancialYear), strconv.FormatBool(year.Final))
			} else {
				rec = append(rec, "", "", "")
			}
			rec = append(rec, level, measure, string(status))
			if headcount != nil {
				rec = append(rec, strconv.FormatInt(*headcount, 10))
			} else {
				rec = append(rec, "")
			}
			if s != nil {
				rec = append(rec, strconv.FormatInt(s.Count, 10), sectorPctText(s.ActualPct), s.TargetPct.String(), sectorPointsText(s), sectorPeopleText(s))
			} else {
				t := ""
				if target != nil {
					t = target.String()
				}
				rec = append(rec, "", "", t, "", "")
			}
			rec = append(rec, reason, notice, r.TargetsSource)
			return cw.Write(rec)
		}
		if len(p.Years) == 0 {
			if err := row(nil, "", "", p.Status, nil, nil, nil, p.Reason); err != nil {
				return err
			}
			continue
		}
		for i := range p.Years {
			y := &p.Years[i]
			for _, l := range y.Levels {
				var tm, tf *pipeline.Pct
				if l.HasTarget {
					tm, tf = &l.TargetMale, &l.TargetFemale
				}
				reason := sectorJoin("; ", l.Reason, l.Note)
				if err := row(y, l.Level, "designated_male", sectorShareStatus(l.Status, l.Male), l.Headcount, l.Male, tm, reason); err != nil {
					return err
				}
				if err := row(y, l.Level, "designated_female", sectorShareStatus(l.Status, l.Female), l.Headcount, l.Female, tf, reason); err != nil {
					return err
				}
			}
			d := y.Disability
			var of *int64
			if d.Share != nil {
				of = &d.Share.Of
			}
			if err := row(y, "all_levels", "disabled", d.Status, of, d.Share, &d.TargetPct, d.Reason); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func sectorShareStatus(level pipeline.SectorStatus, s *pipeline.ShareResult) pipeline.SectorStatus {
	switch {
	case s == nil:
		return level
	case s.Met:
		return pipeline.SectorMet
	}
	return pipeline.SectorShort
}

func sectorIDText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func sectorFYText(fy pipeline.FinancialYear) string {
	if fy == 0 {
		return ""
	}
	return fy.String()
}

func sectorPctText(v float64) string { return strconv.FormatFloat(sectorRound2(v), 'f', 2, 64) }

func sectorRound2(v float64) float64 { return math.Round(v*100) / 100 }

func sectorPointsText(s *pipeline.ShareResult) string {
	if s.Met {
		return "0"
	}
	return strconv.FormatFloat(sectorRound2(s.ShortPoints), 'f', 2, 64)
}

func sectorPeopleText(s *pipeline.ShareResult) string { return strconv.FormatInt(s.ShortPeople, 10) }

func sectorJoin(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// WriteSectorText writes the report as readable tables, one per plan, a
// summary line and the provenance of the figures.
func WriteSectorText(w io.Writer, r *pipeline.SectorCheckReport) error {
	ew := &sectorWriter{w: w}
	for i, p := range r.Plans {
		if i > 0 {
			ew.printf("\n")
		}
		writeSectorPlanText(ew, p)
	}
	if len(r.Plans) > 0 {
		ew.printf("\n")
	}
	s := r.Summary()
	ew.printf("%s: %d meet%s every final-year target, %d fall%s short, %d meet%s only the targets that could be assessed, %d could not be assessed at all.\n",
		sectorPlural(s.Plans, "plan", "plans"), s.Met, sectorVerbS(s.Met), s.Short, sectorVerbS(s.Short), s.PartlyMet, sectorVerbS(s.PartlyMet), s.NotAssessable)
	ew.printf("Targets: %s (sectoral numerical targets, 1 Sep 2025 - 31 Aug 2030); people with disabilities: 3%% of the whole workforce.\n", r.Notice)
	ew.printf("Figures from: %s. %s\n", r.TargetsSource, r.Caveat)
	return ew.err
}

type sectorWriter struct {
	w   io.Writer
	err error
}

func (e *sectorWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *sectorWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

func sectorPlural(n int, one, many string) string { return pipeline.Plural(n, one, many) }

// sectorVerbS is the verb ending for n plans: "1 meets", "2 meet".
func sectorVerbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

func sectorPlanHeading(p pipeline.SectorPlanCheck) string {
	name := p.Name
	if name == "" {
		name = "(no name)"
	}
	title := fmt.Sprintf("Plan %q", name)
	if p.PlanID != 0 {
		title = fmt.Sprintf("Plan %d %q", p.PlanID, name)
	}
	parts := []string{title}
	if p.Sector != "" {
		parts = append(parts, p.Sector)
	} else {
		parts = append(parts, "no sector")
	}
	if !p.StartDate.IsZero() && !p.EndDate.IsZero() {
		parts = append(parts, fmt.Sprintf("%s to %s", p.StartDate, p.EndDate))
	}
	if !p.Company.IsZero() {
		parts = append(parts, "company "+p.Company.String())
	}
	switch {
	case p.Account != "":
		parts = append(parts, "account "+p.Account)
	case p.Source != "":
		parts = append(parts, filepath.Base(p.Source))
	}
	return strings.Join(parts, " | ")
}

func writeSectorPlanText(ew *sectorWriter, p pipeline.SectorPlanCheck) {
	ew.printf("%s\n", sectorPlanHeading(p))
	ew.printf("  %s\n", sectorPlanOutcome(p))
	for _, n := range p.Notes {
		ew.printf("  Note: %s.\n", strings.TrimSuffix(n, "."))
	}
	if len(p.Years) == 0 {
		return
	}
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  YEAR\tLEVEL\tHEADCOUNT\tDESIGNATED MALE (TARGET)\tDESIGNATED FEMALE (TARGET)\tRESULT\n")
	for _, y := range p.Years {
		for _, l := range y.Levels {
			head := "-"
			if l.Headcount != nil {
				head = strconv.FormatInt(*l.Headcount, 10)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", sectorYearText(y), sectorLevelLabel(l.Level), head,
				sectorShareText(l.Male, l.TargetMale, l.HasTarget), sectorShareText(l.Female, l.TargetFemale, l.HasTarget), sectorLevelResult(l))
		}
	}
	tw.Flush()
	tw = tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  YEAR\tEMPLOYEES\tWITH DISABILITIES (TARGET)\tRESULT\n")
	for _, y := range p.Years {
		d := y.Disability
		emp, share, res := "-", "- ("+sectorTargetText(d.TargetPct)+")", "not assessable: "+d.Reason
		if d.Share != nil {
			emp = strconv.FormatInt(d.Share.Of, 10)
			share = fmt.Sprintf("%d = %s (%s)", d.Share.Count, sectorPct(d.Share.ActualPct), sectorTargetText(d.TargetPct))
			res = "met"
			if !d.Share.Met {
				res = "SHORT: " + sectorGapText(d.Share)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", sectorYearText(y), emp, share, res)
	}
	tw.Flush()
}

// sectorPlanOutcome words a plan's overall result: "Final year 2029/30:
// MEETS every target (13 figures measured)." and the like.
func sectorPlanOutcome(p pipeline.SectorPlanCheck) string {
	fin := p.FinalYear()
	switch {
	case p.Reason != "":
		return fmt.Sprintf("NOTHING COULD BE ASSESSED: %s.", p.Reason)
	case p.Status == pipeline.SectorMet:
		return fmt.Sprintf("Final year %s: MEETS every target (%s measured).", fin.Label(), sectorPlural(p.Assessed, "figure", "figures"))
	case p.Status == pipeline.SectorShort:
		return fmt.Sprintf("Final year %s: FALLS SHORT of the targets below.", fin.Label())
	case p.Status == pipeline.SectorPartlyMet:
		return fmt.Sprintf("Final year %s: NOT FULLY ASSESSED: %d of %s could not be assessed (see the reasons below); the %s.",
			fin.Label(), p.NotAssessed, sectorPlural(p.Assessed+p.NotAssessed, "figure", "figures"),
			pipeline.PluralNoun(p.Assessed, "one that could is met", fmt.Sprintf("%d that could are met", p.Assessed)))
	default:
		return fmt.Sprintf("Final year %s: NOTHING COULD BE ASSESSED (see the reasons below).", fin.Label())
	}
}

func sectorYearText(y pipeline.SectorYearCheck) string {
	if y.Final {
		return y.Label() + " final"
	}
	return y.Label()
}

// sectorTargetText formats a target with one decimal, or two when it has two.
func sectorTargetText(p pipeline.Pct) string {
	if p%10 != 0 {
		return fmt.Sprintf("%d.%02d%%", p/100, p%100)
	}
	return fmt.Sprintf("%d.%d%%", p/100, (p%100)/10)
}

func sectorPct(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

func sectorShareText(s *pipeline.ShareResult, target pipeline.Pct, has bool) string {
	t := "no target"
	if has {
		t = sectorTargetText(target)
	}
	if s == nil {
		return "- (" + t + ")"
	}
	return fmt.Sprintf("%s (%s)", sectorPct(s.ActualPct), t)
}

// sectorGapText says how far a share is short: "-2.4 pts, 1 person".
func sectorGapText(s *pipeline.ShareResult) string {
	pts := "-" + strconv.FormatFloat(s.ShortPoints, 'f', 1, 64)
	if s.ShortPoints < 0.05 {
		pts = "less than 0.1"
	}
	return fmt.Sprintf("%s pts, %s", pts, sectorPlural(int(s.ShortPeople), "person", "people"))
}

func sectorLevelResult(l pipeline.SectorLevelCheck) string {
	var out string
	switch l.Status {
	case pipeline.SectorMet:
		out = "met"
	case pipeline.SectorShort:
		var parts []string
		if !l.Male.Met {
			parts = append(parts, "male "+sectorGapText(l.Male))
		}
		if !l.Female.Met {
			parts = append(parts, "female "+sectorGapText(l.Female))
		}
		out = "SHORT: " + strings.Join(parts, "; ")
	default:
		out = "not assessable: " + l.Reason
	}
	if l.Note != "" {
		out += " (" + l.Note + ")"
	}
	return out
}

// Columns of the Sector targets sheet.
var sectorSheetHeader = []string{
	"Plan", "Plan ID", "Account / file", "Company", "Sector", "Year", "Financial year", "Final year", "Level", "Headcount",
	"Designated male %", "Male target %", "Male gap (points)", "Male short (people)",
	"Designated female %", "Female target %", "Female gap (points)", "Female short (people)",
	"With disabilities %", "Disability target %", "Disability gap (points)", "Disability short (people)",
	"Result", "Reason / note",
}

// Column letters of the sheet's key columns (1-based positions in sectorSheetHeader).
const (
	sectorFirstRow  = 6 // first data row; the header is on row 5
	sectorLastCol   = "X"
	sectorResultCol = "W"
	sectorChartCol  = 27 // column AA: chart data blocks
	sectorChartAt   = "AK"
	sectorChartRows = 22 // rows between two plans' charts
)

// AddSectorSheet adds the "Sector targets" worksheet to f: a note naming the
// notice, the file the figures came from (source, such as
// SectorTargets.SourceName()) and the advice to check them against the
// gazette; one row per plan, year and level (and a row per year for people
// with disabilities) with actual shares, targets and gaps, coloured green
// (met) or red (short) by conditional formatting; and a chart per plan of
// the designated-group shares per year against the target lines. It is used
// by `eepipe check --report x.xlsx` and by the export workbook.
func AddSectorSheet(f *excelize.File, plans []pipeline.SectorPlanCheck, source string) error {
	return AddSectorSheetWith(f, plans, source, SectorSheetOptions{})
}

// SectorSheetOptions tune AddSectorSheetWith.
type SectorSheetOptions struct {
	NoCharts bool // leave the sheet's charts out (export --no-charts)

	// streamRows leaves the data rows out of the File (the export writes
	// them into the sheet's part), and rows receives what that needs.
	streamRows bool
	rows       *sectorStreamRows
}

// AddSectorSheetWith is AddSectorSheet with options. Each of excelize's
// cell calls looks the sheet up among every sheet of the workbook, so an
// export adds this sheet before its plan sheets exist (see
// ExportOptions.BeforePlanSheets).
func AddSectorSheetWith(f *excelize.File, plans []pipeline.SectorPlanCheck, source string, opts SectorSheetOptions) error {
	const sheet = SectorSheetName
	if idx, _ := f.GetSheetIndex(sheet); idx >= 0 {
		return fmt.Errorf("the workbook already has a %q sheet", sheet)
	}
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	st, err := templates.NewStyles(f)
	if err != nil {
		return err
	}
	if !opts.NoCharts {
		// The charts first, while the sheet has no rows (see
		// addSectorCharts). The chart data and chart columns get their
		// widths first: a chart spans columns by their widths, and an
		// application's default width (LibreOffice's is wider than
		// excelize's) would stretch it across a printed page's edge.
		for _, c := range []struct {
			from, to string
			w        float64
		}{{"AA", "AA", 34}, {"AB", "AJ", 10}, {sectorChartAt, "BA", 10}} {
			if err := f.SetColWidth(sheet, c.from, c.to, c.w); err != nil {
				return err
			}
		}
		if err := addSectorCharts(f, sheet, plans, st, sectorChartObjects, nil); err != nil {
			return err
		}
	}
	border := []excelize.Border{
		{Type: "left", Color: "BFBFBF", Style: 1}, {Type: "right", Color: "BFBFBF", Style: 1},
		{Type: "top", Color: "BFBFBF", Style: 1}, {Type: "bottom", Color: "BFBFBF", Style: 1},
	}
	pctFmt, ptsFmt := "0.0", "0.00"
	pctStyle, err := f.NewStyle(&excelize.Style{Border: border, CustomNumFmt: &pctFmt})
	if err != nil {
		return err
	}
	ptsStyle, err := f.NewStyle(&excelize.Style{Border: border, CustomNumFmt: &ptsFmt})
	if err != nil {
		return err
	}
	intStyle, err := f.NewStyle(&excelize.Style{Border: border, NumFmt: 1})
	if err != nil {
		return err
	}
	textStyle, err := f.NewStyle(&excelize.Style{Border: border})
	if err != nil {
		return err
	}
	if source == "" {
		source = pipeline.EmbeddedSectorTargetsSource
	}
	notes := []struct {
		cell, text string
		style      int
	}{
		{"A1", "Sector targets: plans against the 2025 sectoral numerical targets", st.Title},
		{"A2", fmt.Sprintf("Notice: %s (sectoral numerical targets for 1 Sep 2025 - 31 Aug 2030). Figures from: %s. People with disabilities: 3%% of the whole workforce.", pipeline.SectorNotice, source), st.Subtitle},
		{"A3", pipeline.SectorCaveat, st.Subtitle},
		{"A4", "Shares are of the level's whole headcount (foreign nationals included). Green: met; red: short. The final year must meet the targets; earlier years show the trajectory.", st.Subtitle},
	}
	for _, n := range notes {
		if err := f.SetCellStr(sheet, n.cell, n.text); err != nil {
			return err
		}
		if err := f.SetCellStyle(sheet, n.cell, n.cell, n.style); err != nil {
			return err
		}
	}
	if err := f.SetSheetRow(sheet, "A5", &sectorSheetHeader); err != nil {
		return err
	}
	if err := f.SetCellStyle(sheet, "A5", sectorLastCol+"5", st.Header); err != nil {
		return err
	}

	// Values are written row by row as one slice; the styles, the same for
	// every data row of a column, are applied afterwards as one range per
	// run of columns, which is far cheaper than styling cell by cell. With
	// opts.streamRows the rows are left out: the export writes them into
	// the sheet's part (GridWorkbook).
	row := sectorFirstRow
	var noYearRows []int // rows of plans with no years: columns J-V are plain text
	err = sectorEachRow(plans, func(vals []any, noYear bool) error {
		if noYear {
			noYearRows = append(noYearRows, row)
		}
		if opts.streamRows {
			row++
			return nil
		}
		// Cells without a value are left out (they get only a style).
		for start := 0; start < len(vals); {
			if vals[start] == nil {
				start++
				continue
			}
			end := start
			for end < len(vals) && vals[end] != nil {
				end++
			}
			cell, _ := excelize.CoordinatesToCellName(start+1, row)
			run := vals[start:end]
			if err := f.SetSheetRow(sheet, cell, &run); err != nil {
				return err
			}
			start = end
		}
		row++
		return nil
	})
	if err != nil {
		return err
	}
	styles := sectorColumnStyles{text: textStyle, integer: intStyle, pct: pctStyle, points: ptsStyle}
	if opts.streamRows && opts.rows != nil {
		*opts.rows = sectorStreamRows{plans: plans, styles: styles, charts: !opts.NoCharts}
	}
	if row > sectorFirstRow && !opts.streamRows {
		if err := sectorDataStyles(f, sheet, sectorFirstRow, row-1, noYearRows, styles); err != nil {
			return err
		}
	}
	last := row - 1
	if last >= sectorFirstRow {
		if err := sectorConditionalFormats(f, sheet, last); err != nil {
			return err
		}
		if err := f.AutoFilter(sheet, fmt.Sprintf("A5:%s%d", sectorLastCol, last), nil); err != nil {
			return err
		}
	}
	widths := []struct {
		from, to string
		w        float64
	}{{"A", "A", 28}, {"B", "B", 9}, {"C", "D", 18}, {"E", "E", 28}, {"F", "H", 10}, {"I", "I", 34}, {"J", "V", 11}, {"W", "W", 15}, {"X", "X", 60}}
	for _, c := range widths {
		if err := f.SetColWidth(sheet, c.from, c.to, c.w); err != nil {
			return err
		}
	}
	if err := f.SetRowHeight(sheet, 5, 45); err != nil {
		return err
	}
	for _, row := range []int{2, 3, 4} {
		if err := xlsx.WrapNote(f, sheet, row, []float64{28, 9, 18, 18, 28, 10, 10, 10, 34}); err != nil {
			return err
		}
	}
	if err := f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: 5, TopLeftCell: "A6", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	// After the filter, which replaces the sheet's properties.
	if err := templates.SetPrintLayout(f, sheet, sectorPrint(!opts.NoCharts && sectorCharted(plans))); err != nil {
		return err
	}
	if opts.NoCharts {
		return nil
	}
	if opts.streamRows {
		// The chart data cells go into the part with the rows; the page
		// breaks, which need the sheet's columns, go in now.
		if opts.rows != nil {
			opts.rows.heading = st.Heading
		}
		return addSectorCharts(f, sheet, plans, st, sectorChartBreaks, nil)
	}
	return addSectorCharts(f, sheet, plans, st, sectorChartCells, nil)
}

// sectorPrint is how the Sector targets sheet prints: too wide for one
// page at a readable size, it prints at templates.WideScale across pages,
// each repeating the plan column and the header row; with charts, the
// chart data (from sectorChartCol) and the charts (from sectorChartAt)
// start pages of their own, so that no table shares a page with a chart.
func sectorPrint(charts bool) templates.PrintSetup {
	p := templates.PrintSetup{TitleFirst: 5, TitleLast: 5, Scale: templates.WideScale, TitleCols: 1}
	if charts {
		at, _, _ := excelize.CellNameToCoordinates(sectorChartAt + "1")
		p.ColBreaks = []int{sectorChartCol, at}
	}
	return p
}

// sectorCharted reports whether any of plans gets a chart (see
// addSectorCharts).
func sectorCharted(plans []pipeline.SectorPlanCheck) bool {
	for _, p := range plans {
		if len(p.Years) > 0 && p.Sector != "" {
			return true
		}
	}
	return false
}

// sectorColumnStyles are the cell styles of the Sector targets sheet's data rows.
type sectorColumnStyles struct{ text, integer, pct, points int }

// columns returns the style of each column of a data row (plans with no
// years: noYear), as sectorDataStyles applies them.
func (st sectorColumnStyles) columns(noYear bool) []int {
	share := []int{st.pct, st.pct, st.points, st.integer}
	cols := []int{st.text, st.integer, st.text, st.text, st.text, st.integer, st.text, st.text, st.text, st.integer}
	cols = append(cols, share...)
	cols = append(cols, share...)
	cols = append(cols, share...)
	cols = append(cols, st.text, st.text)
	if noYear {
		for c := 10; c <= 22; c++ { // J-V
			cols[c-1] = st.text
		}
	}
	return cols
}

// sectorEachRow lays out the data rows of the Sector targets sheet, from
// row sectorFirstRow on: emit gets each row's values by column (nil: no
// value; the slice is reused) and whether the row is a plan's with no
// years.
func sectorEachRow(plans []pipeline.SectorPlanCheck, emit func(vals []any, noYear bool) error) error {
	vals := make([]any, len(sectorSheetHeader))
	put := func(col int, v any) { vals[col-1] = v }
	flush := func(noYear bool) error {
		err := emit(vals, noYear)
		clear(vals)
		return err
	}
	putShare := func(col int, s *pipeline.ShareResult, target pipeline.Pct, hasTarget bool) {
		var actual, tgt, gap, short any
		if hasTarget {
			tgt = target.Float()
		}
		if s != nil {
			actual = s.ActualPct
			gap, short = 0.0, int64(0)
			if !s.Met {
				gap, short = s.ShortPoints, s.ShortPeople
			}
		}
		for i, v := range []any{actual, tgt, gap, short} {
			put(col+i, v)
		}
	}
	planCells := func(p pipeline.SectorPlanCheck, y *pipeline.SectorYearCheck, level string) {
		var id, year, fy, final any
		if p.PlanID != 0 {
			id = p.PlanID
		}
		if y != nil {
			year = y.YearNumber
			if y.FinancialYear != 0 {
				fy = y.FinancialYear.String()
			}
			if y.Final {
				final = "yes"
			}
		}
		where := p.Account
		if where == "" && p.Source != "" {
			where = filepath.Base(p.Source)
		}
		for i, v := range []any{p.Name, id, where, p.Company.String(), p.Sector, year, fy, final, level} {
			put(1+i, v)
		}
	}
	for _, p := range plans {
		if len(p.Years) == 0 {
			planCells(p, nil, "")
			put(23, "not assessable")
			put(24, p.Reason)
			if err := flush(true); err != nil {
				return err
			}
			continue
		}
		for yi := range p.Years {
			y := &p.Years[yi]
			for _, l := range y.Levels {
				planCells(p, y, sectorLevelLabel(l.Level))
				if l.Headcount != nil {
					put(10, *l.Headcount)
				}
				putShare(11, l.Male, l.TargetMale, l.HasTarget)
				putShare(15, l.Female, l.TargetFemale, l.HasTarget)
				putShare(19, nil, 0, false)
				put(23, sectorStatusText(l.Status))
				put(24, sectorJoin("; ", l.Reason, l.Note))
				if err := flush(false); err != nil {
					return err
				}
			}
			d := y.Disability
			planCells(p, y, disabilityLabel)
			if d.Share != nil {
				put(10, d.Share.Of)
			}
			putShare(11, nil, 0, false)
			putShare(15, nil, 0, false)
			putShare(19, d.Share, d.TargetPct, true)
			put(23, sectorStatusText(d.Status))
			put(24, d.Reason)
			if err := flush(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// sectorStreamRows is what the export needs to write the Sector targets
// sheet's data rows into its part: the plans and the column styles.
type sectorStreamRows struct {
	plans   []pipeline.SectorPlanCheck
	styles  sectorColumnStyles
	heading int  // the style of a chart data block's title
	charts  bool // the sheet has charts, and their data cells
}

// sectorDataStyles styles the data rows first to last column by column, one
// range per run of columns with the same style, then gives the rows of
// plans without years plain text in columns J-V.
func sectorDataStyles(f *excelize.File, sheet string, first, last int, noYearRows []int, st sectorColumnStyles) error {
	share := []int{st.pct, st.pct, st.points, st.integer}
	cols := []int{st.text, st.integer, st.text, st.text, st.text, st.integer, st.text, st.text, st.text, st.integer}
	cols = append(cols, share...)
	cols = append(cols, share...)
	cols = append(cols, share...)
	cols = append(cols, st.text, st.text)
	for start := 0; start < len(cols); {
		end := start
		for end+1 < len(cols) && cols[end+1] == cols[start] {
			end++
		}
		from, _ := excelize.CoordinatesToCellName(start+1, first)
		to, _ := excelize.CoordinatesToCellName(end+1, last)
		if err := f.SetCellStyle(sheet, from, to, cols[start]); err != nil {
			return err
		}
		start = end + 1
	}
	for _, r := range noYearRows {
		if err := f.SetCellStyle(sheet, fmt.Sprintf("J%d", r), fmt.Sprintf("V%d", r), st.text); err != nil {
			return err
		}
	}
	return nil
}

func sectorStatusText(s pipeline.SectorStatus) string {
	switch s {
	case pipeline.SectorNotAssessable:
		return "not assessable"
	case pipeline.SectorPartlyMet:
		return "met where assessable"
	}
	return string(s)
}

// sectorConditionalFormats colours the result column and each actual share
// green (met) or red (short), from the exact short-people figures.
func sectorConditionalFormats(f *excelize.File, sheet string, last int) error {
	green, err := f.NewConditionalStyle(&excelize.Style{
		Font: &excelize.Font{Color: "006100"}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"C6EFCE"}}})
	if err != nil {
		return err
	}
	red, err := f.NewConditionalStyle(&excelize.Style{
		Font: &excelize.Font{Color: "9C0006"}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFC7CE"}}})
	if err != nil {
		return err
	}
	first := strconv.Itoa(sectorFirstRow)
	rng := func(col string) string { return fmt.Sprintf("%s%d:%s%d", col, sectorFirstRow, col, last) }
	if err := f.SetConditionalFormat(sheet, rng(sectorResultCol), []excelize.ConditionalFormatOptions{
		{Type: "formula", Criteria: fmt.Sprintf(`$%s%s="met"`, sectorResultCol, first), Format: &green},
		{Type: "formula", Criteria: fmt.Sprintf(`$%s%s="short"`, sectorResultCol, first), Format: &red},
	}); err != nil {
		return err
	}
	// Actual share columns and the short-people column that decides them.
	for _, c := range []struct{ actual, short string }{{"K", "N"}, {"O", "R"}, {"S", "V"}} {
		if err := f.SetConditionalFormat(sheet, rng(c.actual), []excelize.ConditionalFormatOptions{
			{Type: "formula", Criteria: fmt.Sprintf(`AND(ISNUMBER($%s%s),$%s%s=0)`, c.short, first, c.short, first), Format: &green},
			{Type: "formula", Criteria: fmt.Sprintf(`AND(ISNUMBER($%s%s),$%s%s>0)`, c.short, first, c.short, first), Format: &red},
		}); err != nil {
			return err
		}
	}
	return nil
}

// addSectorCharts adds, for every plan with years to show, a block of chart
// data (one row per level and group, one column per year, and the target)
// and a chart of it: columns for the shares of each year, markers for the
// targets.
// sectorChartPass is what a pass of addSectorCharts writes.
type sectorChartPass int

const (
	sectorChartObjects sectorChartPass = iota // the charts only
	sectorChartCells                          // their data cells only (and the page breaks)
	sectorChartBreaks                         // the page breaks only
	sectorChartStream                         // their data cells, to a sectorChartSink only
)

// sectorChartSink receives a row of chart data: vals from column
// sectorChartCol on, the first cell styled with style (0: none).
type sectorChartSink func(row int, vals []any, style int) error

// addSectorCharts adds, per plan, a block of chart data and a chart of it.
// The charts are added in a pass of their own before any row of the sheet
// is written: excelize places a chart by looking up the height of each row
// it spans among all the sheet's rows, which over a sheet of thousands of
// rows and a chart per plan is cubic; the data cells follow in a second
// pass, once the table is written.
func addSectorCharts(f *excelize.File, sheet string, plans []pipeline.SectorPlanCheck, st *templates.Styles, pass sectorChartPass, sink sectorChartSink) error {
	if sink == nil {
		sink = func(row int, vals []any, style int) error {
			c, _ := excelize.CoordinatesToCellName(sectorChartCol, row)
			if err := f.SetSheetRow(sheet, c, &vals); err != nil {
				return err
			}
			if style != 0 {
				return f.SetCellStyle(sheet, c, c, style)
			}
			return nil
		}
	}
	// The first block on the first data row: the header row, repeated on
	// every printed page, belongs to the table.
	top := sectorFirstRow
	var tops []int
	for _, p := range plans {
		if len(p.Years) == 0 || p.Sector == "" {
			continue
		}
		abs := func(col, row int) string {
			c, _ := excelize.CoordinatesToCellName(col, row, true)
			return c
		}
		name := strings.ToUpper(p.Title()[:1]) + p.Title()[1:]
		title := fmt.Sprintf("%s (%s): designated-group shares per year against the targets", name, p.Sector)
		cells := pass == sectorChartCells || pass == sectorChartStream
		if cells {
			if err := sink(top, []any{"Chart data: " + name}, st.Heading); err != nil {
				return err
			}
		}
		header := []any{"Level and group"}
		for _, y := range p.Years {
			header = append(header, y.Label())
		}
		header = append(header, "Target")
		if cells {
			if err := sink(top+1, header, 0); err != nil {
				return err
			}
		}
		row := top + 2
		levels := pipeline.SectorLevels
		for _, level := range levels {
			for _, g := range []string{"male", "female"} {
				vals := []any{fmt.Sprintf("%s: designated %s", sectorLevelLabel(level), g)}
				var target any
				for _, y := range p.Years {
					var v any
					for _, l := range y.Levels {
						if l.Level != level {
							continue
						}
						s, t := l.Male, l.TargetMale
						if g == "female" {
							s, t = l.Female, l.TargetFemale
						}
						if s != nil {
							v = sectorRound2(s.ActualPct)
						}
						if l.HasTarget {
							target = t.Float()
						}
					}
					vals = append(vals, v)
				}
				vals = append(vals, target)
				if cells {
					if err := sink(row, vals, 0); err != nil {
						return err
					}
				}
				row++
			}
		}
		catRef := fmt.Sprintf("%s!%s:%s", sectorQuoteSheet(sheet), abs(sectorChartCol, top+2), abs(sectorChartCol, row-1))
		var bars []excelize.ChartSeries
		for i := range p.Years {
			col := sectorChartCol + 1 + i
			bars = append(bars, excelize.ChartSeries{
				Name:       fmt.Sprintf("%s!%s", sectorQuoteSheet(sheet), abs(col, top+1)),
				Categories: catRef,
				Values:     fmt.Sprintf("%s!%s:%s", sectorQuoteSheet(sheet), abs(col, top+2), abs(col, row-1)),
			})
		}
		tcol := sectorChartCol + 1 + len(p.Years)
		targets := []excelize.ChartSeries{{
			Name:       fmt.Sprintf("%s!%s", sectorQuoteSheet(sheet), abs(tcol, top+1)),
			Categories: catRef,
			Values:     fmt.Sprintf("%s!%s:%s", sectorQuoteSheet(sheet), abs(tcol, top+2), abs(tcol, row-1)),
			Line:       excelize.LineOptions{Type: excelize.LineNone},
			Marker:     excelize.ChartMarker{Symbol: "dash", Size: 20, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"C00000"}}},
		}}
		minPct, vary := 0.0, false
		chart := &excelize.Chart{
			Type:       excelize.Col,
			VaryColors: &vary,
			Series:     bars,
			Title:      excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}},
			Legend:     excelize.ChartLegend{Position: "bottom"},
			Dimension:  excelize.ChartDimension{Width: 900, Height: 400},
			XAxis:      excelize.ChartAxis{Font: ChartAxisFont},
			YAxis:      excelize.ChartAxis{Font: ChartAxisFont, MajorGridLines: true, Minimum: &minPct, Title: excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: "% of the level's headcount"}}}},
			Format:     excelize.GraphicOptions{OffsetX: 10, OffsetY: 5},
		}
		line := &excelize.Chart{Type: excelize.Line, Series: targets, VaryColors: &vary}
		if pass == sectorChartObjects {
			if err := f.AddChart(sheet, fmt.Sprintf("%s%d", sectorChartAt, top), chart, line); err != nil {
				return err
			}
		}
		tops = append(tops, top)
		top += sectorChartRows
	}
	if pass != sectorChartCells && pass != sectorChartBreaks {
		return nil // the breaks go in with the cells, once the columns have their widths
	}
	return sectorChartPageBreaks(f, sheet, tops)
}

// Page geometry of the Sector targets sheet's print setup (A4 landscape,
// templates.SetPrintLayout's margins, sectorPrint's scale), in points.
const (
	sectorPageHeightPt = (8.27 - 2*0.55) * 72 // printable height
	sectorTitleRowPt   = 45                   // row 5, repeated on every page
	sectorRowPt        = 15                   // a row, as Excel draws it (LibreOffice: 12.8)
)

// sectorChartPageBreaks puts a page break before a chart that would otherwise
// straddle two printed pages. The sheet prints at templates.WideScale, so
// a page holds as many rows as that scale allows: estimated here on the
// safe side (Excel's taller rows, less a tenth), a page never ends sooner
// than estimated, and a chart (tops: each chart's first row,
// sectorChartRows apart) that fits in the rows left on the page is printed
// whole.
func sectorChartPageBreaks(f *excelize.File, sheet string, tops []int) error {
	if len(tops) == 0 {
		return nil
	}
	scale := float64(templates.WideScale) / 100
	perPage := int((sectorPageHeightPt/scale - sectorTitleRowPt) / sectorRowPt * 0.9)
	if perPage <= sectorChartRows {
		return nil // a page holds no more than one chart: breaks would not help
	}
	pageStart := 1
	for _, t := range tops {
		last := t + sectorChartRows - 1
		if last-pageStart+1 <= perPage {
			continue
		}
		if t > pageStart {
			if err := f.InsertPageBreak(sheet, fmt.Sprintf("A%d", t)); err != nil {
				return err
			}
		}
		pageStart = t
	}
	return nil
}

// sectorQuoteSheet quotes a sheet name for a cell reference.
func sectorQuoteSheet(name string) string {
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}
