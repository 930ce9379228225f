package grid

import (
	"fmt"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// The grid workbook (docs/formats.md, the grid workbook) as eepipe reads it.
//
// A grid plan sheet is self-describing; the reader finds everything by its
// label, never by a fixed cell address, so inserted rows and columns or a
// block moved elsewhere on the sheet still read:
//
//   - Plan metadata: a cell reading one of the metadata labels ("Plan ID",
//     "Plan name", "Company VAT number", "Company registration number",
//     "Company ID number", "Start date", "End date", "Sector", "Scorecard ID",
//     or the flat column name such as plan_name; case, spaces, punctuation and
//     a trailing colon do not matter). Its value is the first non-blank cell
//     among the three cells to its right; none means "not given".
//   - Grids: one per financial year per target type. A grid starts with a
//     label cell such as "Year 1 — 2026/27 — All employees" (a year number,
//     a financial year, or both, and the target type: "All employees" or
//     "Employees with disabilities"/"Disabled employees"). Within four rows
//     below the label comes the column header: a row of races ("African",
//     "Coloured", ..., or the catalog keys) with a row of genders ("Male",
//     "Female") under it, a race spanning its gender columns (merged or
//     not); or a single row of combined headers ("African male"). The rows
//     below the header carry an occupational level in a cell left of the
//     first counter column ("Top management", or the key top_managers) and
//     the counters. The grid ends at the first row whose level and counter
//     cells are all blank. The label sits at the grid's top left: the grid
//     spans the label's column up to the next grid label on the same row.
//   - A blank counter cell means "leave as is"; a grid whose counter cells
//     are all blank is skipped.
//
// Each grid becomes one pipeline.Record keyed by the flat column names, each
// cell keeping the sheet cell it came from, so that validation cites exact
// cells. Layout problems (a grid without a label, a header or row label that
// names no race, gender or level) are reported with the closest names.

// MaxScanRows bounds how many rows of a sheet the grid reader looks at.
const MaxScanRows = 20000

// sheetReader reads one grid sheet.
type sheetReader struct {
	cells func(r, c int) pipeline.Cell // the typed cell at (r, c), without its file nor its cell reference
	file  string
	sheet string
	text  sheetText
	// mergedAway maps the cells (row, col) inside a merged range other
	// than its top-left cell to that top-left cell.
	mergedAway map[[2]int][2]int
	// reported holds the cells a header error was reported at.
	reported map[[2]int]bool
	// unlabelled are the rows of race headers that belong to no grid
	// (reported by findUnlabelledGrids).
	unlabelled []int
	// hiddenCols are the columns the sheet hides, read on first use
	// (hiddenCol: only messages name them) from hiddenSrc.
	hiddenCols map[int]bool
	hiddenSrc  func() map[int]bool
	// notes are the notes in columns without a header (by column).
	notes    map[int]*columnNotes
	m        *templates.Matcher
	memo     *headerMemo // of m; nil remembers nothing
	cat      *pipeline.Catalog
	problems pipeline.Problems
}

func (g *sheetReader) origin(r, c int) pipeline.Origin {
	o := pipeline.Origin{File: g.file, Sheet: g.sheet, Row: r, Column: c}
	if r > 0 && c > 0 {
		o.Cell, _ = excelize.CoordinatesToCellName(c, r)
	}
	return o
}

// cell returns the typed cell at (r, c) with its origin in full, the
// cell reference included.
func (g *sheetReader) cell(r, c int) pipeline.Cell {
	cell := g.cellAt(r, c)
	cell.Origin = cell.Origin.WithCell()
	return cell
}

// cellAt returns the typed cell at (r, c); its origin has the file, sheet,
// row and column but no cell reference (Origin.Cell): the pipeline names
// the cell from its row and column (pipeline.Origin.WithCell), so that the
// ~90 counter cells of each grid cost no reference each.
func (g *sheetReader) cellAt(r, c int) pipeline.Cell {
	if _, away := g.mergedAway[[2]int{r, c}]; away {
		// Covered by a merged range that starts elsewhere: Excel shows
		// nothing of its own there (excelize would return the range's
		// top-left value, such as the label merged across it).
		return pipeline.Cell{Origin: pipeline.Origin{File: g.file, Sheet: g.sheet, Row: r, Column: c}}
	}
	cell := g.cells(r, c)
	cell.Origin.File = g.file
	return cell
}

func (g *sheetReader) errorf(r, c int, value string, suggestions []string, format string, args ...any) {
	g.problems = append(g.problems, pipeline.Problem{
		Severity: pipeline.Error, Origin: g.origin(r, c), Value: value,
		Message: fmt.Sprintf(format, args...), Suggestions: suggestions,
	})
}

func (g *sheetReader) warnf(r, c int, value string, format string, args ...any) {
	g.problems.Warnf(g.origin(r, c), value, format, args...)
}

// sheetSource is what the grid reader reads of a sheet: the text of
// its first MaxScanRows rows (for the layout), each cell typed, and
// the cells its merged ranges cover other than their top-left ones, and
// the columns it hides. ReadWorkbook fills it from one streaming scan of
// the sheet.
type sheetSource struct {
	text   func() (sheetText, error)
	cells  func(r, c int) pipeline.Cell
	merged func() (map[[2]int][2]int, error)
	hidden func(text sheetText) map[int]bool // the columns hidden, of those text spans
}

// readGridSheetFrom reads the grid plan sheet src into records and its
// problems; cat nil means the default catalog. memo, when not nil, is the
// headerMemo of the workbook's sheets read before, for cat.
//
// m is the vocabulary of cat (templates.NewMatcher, or a mapping file's
// mapping.File.Matcher); nil means cat's own.
func readGridSheetFrom(src sheetSource, file, sheet string, cat *pipeline.Catalog, m *templates.Matcher, memo *headerMemo) (records []pipeline.Record, problems pipeline.Problems) {
	g := &sheetReader{cells: src.cells, file: file, sheet: sheet, cat: pipeline.DefaultCatalog(), memo: memo, m: m}
	if cat != nil {
		g.cat = cat
	}
	if g.m == nil {
		g.m = templates.NewMatcher(g.cat)
	}
	text, err := src.text()
	if err != nil {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "", "cannot read the sheet: %v", err)
		return nil, g.problems
	}
	g.text = text
	g.mergedAway, err = src.merged()
	if err != nil {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "", "cannot read the sheet: %v", err)
		return nil, g.problems
	}
	g.hiddenSrc = func() map[int]bool { return src.hidden(text) }
	blocks := g.findGrids()
	g.findUnlabelledGrids(blocks)
	g.findOrphanLevelRows(blocks)
	meta := g.readMeta(blocks)
	if len(blocks) == 0 {
		g.problems.Errorf(pipeline.Origin{File: file, Sheet: sheet}, "",
			"no grid found: each grid needs a label such as %q above a header of races and genders",
			templates.GridLabel(1, pipeline.FinancialYear(2026), pipeline.TargetAll))
	}
	g.placeGoals(blocks, meta)
	for _, b := range blocks {
		rec, ok := g.record(b, meta)
		if b.label.section == sectionProfile {
			g.baseline(b)
			if ok {
				rec.Cells[pipeline.ColSection] = pipeline.Cell{Origin: rec.Origin, Kind: pipeline.CellText, Text: pipeline.SectionBaseline}
				records = append(records, rec)
			}
			continue
		}
		if ok {
			records = append(records, rec)
		}
	}
	g.reportNotes()
	if n := targetGrids(blocks); n > 0 && len(records) == 0 && !g.problems.HasErrors() {
		g.problems.Warnf(pipeline.Origin{File: file, Sheet: sheet}, "",
			"every counter cell of the %d grid%s on this sheet is blank, so the sheet changes nothing; fill in the counters to set",
			n, map[bool]string{true: "", false: "s"}[n == 1])
	}
	return records, g.problems
}

// maxMergedCells bounds the cells of a grid sheet's merged ranges that
// mergedAway records: a grid sheet merges a few label cells, while a
// 23 KB sheet of 4,000 merges of 65,536 cells each would hold 262 million.
const maxMergedCells = 1 << 17

// addMergedAway records the cells of one merged range (rows r0 to r1,
// columns c0 to c1) other than its top-left one in out, within
// maxMergedCells cells in all.
func addMergedAway(out map[[2]int][2]int, r0, c0, r1, c1 int) error {
	if r1 < r0 || c1 < c0 {
		return nil
	}
	if len(out)+(r1-r0+1)*(c1-c0+1) > maxMergedCells {
		return xlsx.LimitErrorf("%v: the sheet's merged ranges cover more than %d cells (a grid sheet merges a few label cells)", xlsx.ErrOversized, maxMergedCells)
	}
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			if r != r0 || c != c0 {
				out[[2]int{r, c}] = [2]int{r0, c0}
			}
		}
	}
	return nil
}
