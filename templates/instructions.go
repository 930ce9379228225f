package templates

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
)

// AddInstructionsSheet adds the Instructions sheet: how to fill in a grid
// plan sheet, what the metadata cells and the counters mean, and that a
// blank counter leaves the service's value as it is. The sheet is prose in
// column A and is never read as data.
func AddInstructionsSheet(f *excelize.File, cat *pipeline.Catalog, st *Styles) error {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	if idx, _ := f.GetSheetIndex(InstructionsSheet); idx >= 0 {
		return nil
	}
	if _, err := f.NewSheet(InstructionsSheet); err != nil {
		return err
	}
	w := &sheetWriter{f: f, sheet: InstructionsSheet}
	row := 1
	para := func(style int, text string) {
		w.str(1, row, text, style)
		if style == st.Paragraph || style == st.Help {
			// Excel keeps a row one line high unless told otherwise, so
			// each paragraph row gets the height of its wrapped lines.
			w.setErr(f.SetRowHeight(InstructionsSheet, row, ParagraphHeight(text, instructionsWidth)))
		}
		row++
	}
	gap := func() { row++ }

	var levels, races, genders []string
	for _, l := range cat.Levels() {
		levels = append(levels, fmt.Sprintf("%s (%s)", LevelLabel(l), l))
	}
	for _, r := range cat.Races() {
		races = append(races, RaceLabel(r))
	}
	for _, g := range cat.Genders() {
		genders = append(genders, GenderLabel(g))
	}
	example := GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll)

	para(st.Title, "How to fill in this workbook")
	para(st.Paragraph, "Each plan sheet holds one Employment Equity plan: the plan's details at the top and, below them, one grid of targets per financial year and per target type. eepipe reads the sheet by its labels, so you may insert rows or columns, or move a whole grid, as long as each label stays next to its value.")
	gap()
	para(st.Heading, "1. The plan's details")
	para(st.Paragraph, "Type each value in the white cell to the right of its label.")
	for _, m := range MetaFields {
		para(st.Paragraph, fmt.Sprintf("•  %s: %s", m.Label, m.Help))
	}
	para(st.Paragraph, "For an existing plan, the Plan ID is enough. For a new plan, give the plan name, the start and end dates and at least one company identifier. Dates are real dates or text written YYYY-MM-DD.")
	gap()
	para(st.Heading, "2. The grids")
	para(st.Paragraph, fmt.Sprintf("Each grid starts with a label such as %q: the plan year (1 is the plan's first financial year, which runs from 1 September to 31 August), the financial year, and the target type. \"All employees\" holds the targets for the whole workforce; \"Employees with disabilities\" those for employees with disabilities.", example))
	para(st.Paragraph, "The columns are the races ("+strings.Join(races, ", ")+"), each split by gender ("+strings.Join(genders, ", ")+"). The rows are the occupational levels: "+strings.Join(levels, "; ")+".")
	para(st.Paragraph, "Each cell is a counter: the target number of employees of that race, gender and occupational level, for example the number of African male employees in top management. Counters are whole numbers, 0 or more.")
	gap()
	para(st.Heading, "3. Blank means leave as is")
	para(st.Paragraph, "A blank counter cell leaves the value on the service as it is; type 0 to set a counter to zero. A grid with every cell blank is skipped. A plan sheet does not need a grid for every year: add only the years you change.")
	gap()
	para(st.Heading, "4. Check before you send")
	para(st.Paragraph, "Run eepipe validate on the workbook: it lists every problem with its sheet and cell, and suggests the closest name for a misspelt level, race or gender. Totals (total permanent, grand total) that do not add up, and disabled-employee targets above the matching all-employee target, are reported as warnings.")
	gap()
	para(st.Help, "Counter names in the flat CSV layout: "+pipeline.CounterName("{race}", "{gender}", "{level}")+", for example "+pipeline.CounterName("african", "male", "top_managers")+".")
	w.setErr(f.SetColWidth(InstructionsSheet, "A", "A", instructionsWidth))
	w.setErr(SetPrintLayout(f, InstructionsSheet, PrintSetup{Portrait: true}))
	return w.err
}

// instructionsWidth is the width of the Instructions sheet's column A, in
// characters: narrow enough that the column fits an A4 portrait page at
// 100% in LibreOffice, which measures a character wider than Excel does
// and, on this sheet, cuts off what does not fit rather than scaling it
// (at 90 the paragraphs ran past the right edge of the printed page).
const instructionsWidth = 80

// ParagraphHeight returns the row height, in points, that shows text
// wrapped in a column width characters wide: its lines counted as a word
// wrap does, with a margin for proportional fonts, at 15 points a line.
func ParagraphHeight(text string, width float64) float64 {
	perLine := int(width * 0.9) // proportional text runs wider than the width's "0" digits at times
	lines, cur := 1, 0
	for _, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case cur == 0:
			cur = n
		case cur+1+n <= perLine:
			cur += 1 + n
		default:
			lines++
			cur = n
		}
		for cur > perLine { // a word longer than a line
			lines++
			cur -= perLine
		}
	}
	return float64(lines)*15 + 3
}
