package reports

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// CheckPrintSheet is the first sheet of `eepipe check --report x.xlsx`: the
// check laid out to print on A4 landscape at (near) full size. The wide
// table of every figure, for filters and charts, follows it as the Sector
// targets sheet (SectorSheetName).
const CheckPrintSheet = "Sector check"

// checkPrintCols are the print sheet's columns: name and width in
// characters. Together about 145 characters, which fit the printable width
// of A4 landscape (10.9 in between narrow margins) at 97% or more; a plan's
// identity is a heading row above its figures rather than five columns
// repeated on every row, and each level has a row per designated group
// rather than twelve share columns side by side.
var checkPrintCols = []struct {
	name  string
	width float64
}{
	{"Year", 14}, {"Level", 20}, {"Group", 18}, {"Headcount", 10},
	{"Actual %", 9}, {"Target %", 9}, {"Gap (points)", 9}, {"Short (people)", 9},
	{"Result", 14}, {"Reason / note", 33},
}

// checkPrintLast is the print sheet's last column letter; its header row.
const (
	checkPrintLast      = "J"
	checkPrintHeaderRow = 5
	checkPrintLineHt    = 15.0 // points per line of text at the default font
)

// addCheckPrintSheet adds the CheckPrintSheet for plans to f, written
// with a StreamWriter (a check of thousands of plans has hundreds of
// thousands of rows): the notice, figures source and caveat as wrapped
// paragraphs; the header, repeated on every printed page; per plan a
// heading row (name, id, sector, dates, company, account or file, and the
// overall result), its notes, then per year and level a row per designated
// group (male, female) and a row for people with disabilities, the result
// filled green (met) or red (short). Text wraps in its column, with the
// row high enough for it.
func addCheckPrintSheet(f *excelize.File, plans []sector.SectorPlanCheck, source string) error {
	const sheet = CheckPrintSheet
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	st, err := templates.NewStyles(f)
	if err != nil {
		return err
	}
	s, err := newCheckPrintStyles(f)
	if err != nil {
		return err
	}

	// Page setup before the stream writer takes the sheet.
	if err := templates.SetPrintLayout(f, sheet, templates.PrintSetup{TitleFirst: checkPrintHeaderRow, TitleLast: checkPrintHeaderRow}); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	for i, c := range checkPrintCols {
		if err := sw.SetColWidth(i+1, i+1, c.width); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: checkPrintHeaderRow, TopLeftCell: fmt.Sprintf("A%d", checkPrintHeaderRow+1), ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	w := &checkPrintWriter{sw: sw, s: s}
	if source == "" {
		source = sector.EmbeddedSectorTargetsSource
	}
	if err := w.line(nil, "Sector check: plans against the 2025 sectoral numerical targets", st.Title); err != nil {
		return err
	}
	for _, p := range []string{
		fmt.Sprintf("Notice: %s (sectoral numerical targets for 1 Sep 2025 - 31 Aug 2030). Figures from: %s. People with disabilities: 3%% of the whole workforce.", sector.SectorNotice, source),
		sector.SectorCaveat,
		"Shares are of the level's whole headcount (foreign nationals included). Designated male: African, Coloured and Indian men; designated female: African, Coloured, Indian and white women. Green: met; red: short. The final year must meet the targets; earlier years show the trajectory. Every figure, for filters and charts, is on the sheet " + SectorSheetName + ".",
	} {
		if err := w.line(nil, p, s.para); err != nil {
			return err
		}
	}
	header := make([]any, len(checkPrintCols))
	for i, c := range checkPrintCols {
		header[i] = excelize.Cell{StyleID: st.Header, Value: c.name}
	}
	if err := w.line(header, "", 0); err != nil {
		return err
	}
	if w.row != checkPrintHeaderRow {
		return fmt.Errorf("check print sheet: header on row %d, want %d", w.row, checkPrintHeaderRow)
	}
	for _, p := range plans {
		if err := w.plan(p); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// checkPrintStyles are the cell styles of the check's print sheet.
type checkPrintStyles struct{ para, text, num, pct, pts, met, short, plan, note int }

// newCheckPrintStyles registers the print sheet's cell styles in f.
func newCheckPrintStyles(f *excelize.File) (checkPrintStyles, error) {
	var s checkPrintStyles
	var err error
	border := templates.ThinBorder(templates.BorderColor)
	wrap := &excelize.Alignment{WrapText: true, Vertical: "top"}
	pctFmt, ptsFmt := templates.PercentFormat, templates.PointsFormat
	for _, d := range []struct {
		dst *int
		s   *excelize.Style
	}{
		{&s.para, &excelize.Style{Font: &excelize.Font{Italic: true, Color: templates.NoteColor}, Alignment: wrap}},
		{&s.text, &excelize.Style{Border: border, Alignment: wrap}},
		{&s.num, &excelize.Style{Border: border, NumFmt: 1, Alignment: &excelize.Alignment{Vertical: "top"}}},
		{&s.pct, &excelize.Style{Border: border, CustomNumFmt: &pctFmt, Alignment: &excelize.Alignment{Vertical: "top"}}},
		{&s.pts, &excelize.Style{Border: border, CustomNumFmt: &ptsFmt, Alignment: &excelize.Alignment{Vertical: "top"}}},
		{&s.met, &excelize.Style{Border: border, Alignment: wrap, Font: &excelize.Font{Color: templates.GoodText}, Fill: templates.SolidFill(templates.GoodFill)}},
		{&s.short, &excelize.Style{Border: border, Alignment: wrap, Font: &excelize.Font{Bold: true, Color: templates.BadText}, Fill: templates.SolidFill(templates.BadFill)}},
		{&s.plan, &excelize.Style{Font: &excelize.Font{Bold: true, Color: templates.HeadingColor}, Fill: templates.SolidFill(templates.BandFill), Border: border, Alignment: wrap}},
		{&s.note, &excelize.Style{Font: &excelize.Font{Italic: true}, Border: border, Alignment: wrap}},
	} {
		if *d.dst, err = f.NewStyle(d.s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// checkPrintWriter streams the print sheet's rows.
type checkPrintWriter struct {
	sw  *excelize.StreamWriter
	row int
	s   checkPrintStyles
}

// line writes one row; mergedText, when not "", is the text of a cell
// merged across every column, whose text sets the row's height like each
// wrapped cell's.
func (w *checkPrintWriter) line(cells []any, mergedText string, mergedStyle int) error {
	w.row++
	row := w.row
	lines := 1
	if mergedText != "" {
		cells = []any{excelize.Cell{StyleID: mergedStyle, Value: mergedText}}
		lines = checkPrintLines(mergedText, checkPrintTotalWidth())
		from, _ := excelize.CoordinatesToCellName(1, row)
		if err := w.sw.MergeCell(from, fmt.Sprintf("%s%d", checkPrintLast, row)); err != nil {
			return err
		}
	}
	for i, c := range cells {
		if cell, ok := c.(excelize.Cell); ok {
			if text, ok := cell.Value.(string); ok && mergedText == "" {
				lines = max(lines, checkPrintLines(text, checkPrintCols[i].width))
			}
		}
	}
	cell, _ := excelize.CoordinatesToCellName(1, row)
	return w.sw.SetRow(cell, cells, excelize.RowOpts{Height: float64(lines) * checkPrintLineHt})
}

func (w *checkPrintWriter) text(v string) excelize.Cell {
	return excelize.Cell{StyleID: w.s.text, Value: v}
}

func (w *checkPrintWriter) blank(style int) excelize.Cell { return excelize.Cell{StyleID: style} }

func (w *checkPrintWriter) result(v string, met bool, assessed bool) excelize.Cell {
	switch {
	case !assessed:
		return w.text(v)
	case met:
		return excelize.Cell{StyleID: w.s.met, Value: v}
	}
	return excelize.Cell{StyleID: w.s.short, Value: v}
}

// share is the Actual % .. Short (people) cells of one share.
func (w *checkPrintWriter) share(sh *sector.ShareResult, target sector.Pct, has bool) []any {
	s := w.s
	out := []any{w.blank(s.pct), w.blank(s.pct), w.blank(s.pts), w.blank(s.num)}
	if has {
		out[1] = excelize.Cell{StyleID: s.pct, Value: target.Float()}
	}
	if sh != nil {
		out[0] = excelize.Cell{StyleID: s.pct, Value: sh.ActualPct}
		gap, people := 0.0, int64(0)
		if !sh.Met {
			gap, people = sh.ShortPoints, sh.ShortPeople
		}
		out[2] = excelize.Cell{StyleID: s.pts, Value: gap}
		out[3] = excelize.Cell{StyleID: s.num, Value: people}
	}
	return out
}

func (w *checkPrintWriter) shareResult(sh *sector.ShareResult, has bool) excelize.Cell {
	switch {
	case !has:
		return w.text("no target")
	case sh == nil:
		return w.text("not assessable")
	case sh.Met:
		return w.result("met", true, true)
	}
	return w.result("short", false, true)
}

// plan writes a plan's heading row, its notes, then per year and level a
// row per designated group and a row for people with disabilities.
func (w *checkPrintWriter) plan(p sector.SectorPlanCheck) error {
	s, text, blank, share, shareResult, line := w.s, w.text, w.blank, w.share, w.shareResult, w.line
	heading := sectorPlanHeading(p) + ": " + sectorPlanOutcome(p)
	if err := line(nil, heading, s.plan); err != nil {
		return err
	}
	for _, n := range p.Notes {
		if err := line(nil, "Note: "+strings.TrimSuffix(n, ".")+".", s.note); err != nil {
			return err
		}
	}
	for _, y := range p.Years {
		year := sectorYearText(y)
		for _, l := range y.Levels {
			level := sectorLevelLabel(l.Level)
			head := blank(s.num)
			if l.Headcount != nil {
				head = excelize.Cell{StyleID: s.num, Value: *l.Headcount}
			}
			reason := sectorJoin("; ", l.Reason, l.Note)
			if l.Male == nil && l.Female == nil {
				cells := []any{text(year), text(level), text("designated male and female"), head}
				cells = append(cells, share(nil, l.TargetMale, false)...)
				cells = append(cells, text(sectorStatusText(l.Status)), text(reason))
				if err := line(cells, "", 0); err != nil {
					return err
				}
				continue
			}
			for g, grp := range []struct {
				name   string
				sh     *sector.ShareResult
				target sector.Pct
			}{{"designated male", l.Male, l.TargetMale}, {"designated female", l.Female, l.TargetFemale}} {
				cells := []any{text(year), text(level), text(grp.name), head}
				cells = append(cells, share(grp.sh, grp.target, l.HasTarget)...)
				note := ""
				if g == 0 {
					note = reason
				}
				cells = append(cells, shareResult(grp.sh, l.HasTarget), text(note))
				if err := line(cells, "", 0); err != nil {
					return err
				}
			}
		}
		d := y.Disability
		emp := blank(s.num)
		if d.Share != nil {
			emp = excelize.Cell{StyleID: s.num, Value: d.Share.Of}
		}
		cells := []any{text(year), text("all levels"), text("people with disabilities"), emp}
		cells = append(cells, share(d.Share, d.TargetPct, true)...)
		cells = append(cells, shareResult(d.Share, true), text(d.Reason))
		if err := line(cells, "", 0); err != nil {
			return err
		}
	}
	return nil
}

// checkPrintTotalWidth is the print sheet's width in characters.
func checkPrintTotalWidth() float64 {
	w := 0.0
	for _, c := range checkPrintCols {
		w += c.width
	}
	return w
}

// checkPrintLines estimates the lines text takes wrapped in a column of
// width characters: words moved whole to the next line, as Excel and
// LibreOffice wrap, with a margin of one character for the cell's padding.
func checkPrintLines(text string, width float64) int {
	fit := max(int(width)-1, 1)
	lines := 0
	for _, para := range strings.Split(text, "\n") {
		lines++
		n := 0
		for _, word := range strings.Fields(para) {
			w := utf8.RuneCountInString(word)
			switch {
			case n == 0:
				n = w
			case n+1+w <= fit:
				n += 1 + w
			default:
				lines++
				n = w
			}
			for n > fit { // a word longer than the column breaks
				lines++
				n -= fit
			}
		}
	}
	return lines
}
