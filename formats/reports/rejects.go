package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
	"github.com/eepipe/eepipe/templates"
)

// ErrRejectsLayout is the class of rejects that the rejects file cannot
// hold in their layout (docs/apply-and-state.md, "Skipping invalid plans").
var ErrRejectsLayout = errors.New("the rejects file cannot hold these rejects in their layout")

// RejectsWritten is what WriteRejects wrote: the files, the table rows and
// grid sheets in them, and the files rejected whole whose content could
// not be copied (no table was read from them).
type RejectsWritten struct {
	Paths       []string
	Rows        int
	Sheets      int
	NotCopied   []string
	ErrorsShown int
}

// GridRejectsPath is where WriteRejects puts the rejected grid sheets when
// flat rows are rejected too: path with "-grid" before its .xlsx
// extension (a workbook holds one flat table, or grid sheets).
func GridRejectsPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + "-grid.xlsx"
}

// WriteRejects writes the rejected rows and grid sheets of rej to path
// (.xlsx or .csv), in their input's layout, each problem beside its cell,
// so that the file can be fixed and applied again:
//
//   - flat rows (of CSV files and workbooks' flat tables) make one flat
//     table: the first table's header, with the columns of later tables
//     matched by name and the others appended; an .xlsx file holds them as
//     a sheet, cells copied with their values and number formats, problems
//     marked as in AnnotateWorkbook; a .csv file takes the rows of CSV
//     inputs (their text as read) with each row's problems in a last
//     column, eepipe_errors, which a later read ignores (a warning);
//   - grid sheets are copied whole into an .xlsx workbook, marked as in
//     AnnotateWorkbook; when flat rows are rejected too they go to
//     gridPath (GridRejectsPath(path), or its stamped name).
//
// Rejects a rejects file cannot hold (grid sheets or workbook rows with a
// .csv file, a long table's rows) are an error matching ErrRejectsLayout,
// returned before anything is written. Every file is written to a
// temporary name and renamed.
func WriteRejects(path, gridPath string, rej *assemble.Rejection, cat *pipeline.Catalog, words *mapping.File) (RejectsWritten, error) {
	var w RejectsWritten
	flat, grids := rejectSources(rej)
	csvOut := strings.EqualFold(filepath.Ext(path), ".csv")
	if csvOut && len(grids) > 0 {
		return w, fmt.Errorf("%w: %s holds flat rows, and grid sheets of %s are rejected; give --rejects a .xlsx name", ErrRejectsLayout, path, grids[0].file)
	}
	tables, err := readRejectTables(flat, cat, words, csvOut)
	if err != nil {
		return w, err
	}
	for _, f := range rej.WholeFiles {
		if !rejectHasFile(flat, grids, f) {
			w.NotCopied = append(w.NotCopied, f)
		}
	}
	if len(tables) == 0 {
		gridPath = path
	}
	if len(tables) > 0 {
		var n int
		if csvOut {
			n, err = writeRejectsCSV(path, tables, rej.Problems)
		} else {
			n, err = writeRejectsFlatXLSX(path, tables, rej.Problems)
		}
		if err != nil {
			return w, err
		}
		w.Paths, w.Rows = append(w.Paths, path), n
	}
	if len(grids) > 0 {
		if err := writeRejectsGrid(gridPath, grids, rej.Problems); err != nil {
			return w, err
		}
		w.Paths, w.Sheets = append(w.Paths, gridPath), len(grids)
	}
	for _, p := range rej.Problems {
		if p.Severity == pipeline.Error {
			w.ErrorsShown++
		}
	}
	return w, nil
}

// rejectSource is one input table or grid sheet with rejects: its file,
// sheet and rows (table rows; none for a grid sheet).
type rejectSource struct {
	file, sheet string
	rows        []int
}

// rejectSources groups rej.Rows by file and sheet: the flat tables' rows
// and the grid sheets.
func rejectSources(rej *assemble.Rejection) (flat, grids []*rejectSource) {
	var last *rejectSource
	for _, r := range rej.Rows {
		if r.Row == 0 {
			grids = append(grids, &rejectSource{file: r.File, sheet: r.Sheet})
			continue
		}
		if last == nil || last.file != r.File || last.sheet != r.Sheet {
			last = &rejectSource{file: r.File, sheet: r.Sheet}
			flat = append(flat, last)
		}
		last.rows = append(last.rows, r.Row)
	}
	return flat, grids
}

func rejectHasFile(flat, grids []*rejectSource, file string) bool {
	for _, s := range append(append([]*rejectSource{}, flat...), grids...) {
		if s.file == file {
			return true
		}
	}
	return false
}

// rejectTable is one flat source read back: its header and rows as text
// (a CSV file), or its workbook to copy cells from.
type rejectTable struct {
	src  *rejectSource
	raw  *table.RawTable
	book *excelize.File // a workbook's table: cells are copied from it
	cols []int          // by source column (0-based): the rejects table's column (0-based)
}

// readRejectTables reads the header and rejected rows of each flat
// source; with csvOut only CSV inputs are allowed.
func readRejectTables(flat []*rejectSource, cat *pipeline.Catalog, words *mapping.File, csvOut bool) ([]*rejectTable, error) {
	var out []*rejectTable
	for _, s := range flat {
		want := map[int]bool{}
		for _, r := range s.rows {
			want[r] = true
		}
		t := &rejectTable{src: s}
		var err error
		if strings.EqualFold(filepath.Ext(s.file), ".csv") {
			t.raw, err = table.ReadRawCSV(s.file, cat, words, want)
		} else if csvOut {
			return nil, fmt.Errorf("%w: rows of the workbook %s are rejected, which keep their cells (dates, numbers) only in a workbook; give --rejects a .xlsx name", ErrRejectsLayout, s.file)
		} else {
			t.book, t.raw, err = readRejectSheet(s.file, s.sheet, cat, words, want)
		}
		if err != nil {
			return nil, fmt.Errorf("the rejected rows of %s: %w", s.file, err)
		}
		if t.raw.Long {
			return nil, fmt.Errorf("%w: %s is a long table (one row per counter), whose rejected plans are not handed back; fix its errors (eepipe validate) and apply it again", ErrRejectsLayout, s.file)
		}
		out = append(out, t)
	}
	return out, nil
}

// readRejectSheet opens a workbook's flat table: its header row (the
// first of the first templates.FlatHeaderRows rows with a target_type cell) and
// the wanted rows' texts.
func readRejectSheet(file, sheet string, cat *pipeline.Catalog, words *mapping.File, want map[int]bool) (*excelize.File, *table.RawTable, error) {
	limit, err := annotateCheckSize(file)
	if err != nil {
		return nil, nil, err
	}
	f, err := annotateOpen(file, limit)
	if err != nil {
		return nil, nil, err
	}
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	t := &table.RawTable{Rows: map[int][]string{}}
	for i, row := range rows {
		n := i + 1
		if t.Header == nil && n <= templates.FlatHeaderRows && hasTargetType(row) {
			t.HeaderRow, t.Header = n, row
			t.Names = table.ColumnNames(row, cat, words)
			t.Long = hasAll(row, "counter", "value")
			continue
		}
		if t.Header != nil && want[n] {
			t.Rows[n] = row
		}
	}
	if t.Header == nil {
		f.Close()
		return nil, nil, errors.New("no header row")
	}
	return f, t, nil
}

// hasTargetType reports whether the row is a flat table's header row
// (templates.IsFlatHeaderCell).
func hasTargetType(row []string) bool { return slices.ContainsFunc(row, templates.IsFlatHeaderCell) }

// hasAll reports whether the row has a cell reading each name (case and
// surrounding spaces ignored).
func hasAll(row []string, names ...string) bool {
	for _, n := range names {
		found := false
		for _, c := range row {
			if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(c, "\ufeff")), n) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// rejectsHeader is the rejects table's header: the first table's, with the
// columns of the others matched by canonical name (or, for a column eepipe
// does not read, by its text) and the rest appended; it sets each table's
// cols.
func rejectsHeader(tables []*rejectTable) []string {
	var header, names []string
	for _, t := range tables {
		t.cols = make([]int, len(t.raw.Header))
		for i, h := range t.raw.Header {
			n := t.raw.Names[i]
			at := -1
			for j := range header {
				if (n != "" && names[j] == n) || (n == "" && names[j] == "" && strings.EqualFold(strings.TrimSpace(header[j]), strings.TrimSpace(h))) {
					at = j
					break
				}
			}
			if at < 0 || (t == tables[0]) {
				at = len(header)
				header, names = append(header, h), append(names, n)
			}
			t.cols[i] = at
		}
	}
	return header
}

// rejectPlace maps a problem of a rejected row to its place in the rejects
// table: row (1-based, the header being row 1) and column (1-based; 0 for
// the whole row).
type rejectPlace struct{ row, col int }

// placeProblem returns where p's cell is in the rejects table.
func placeProblem(p pipeline.Problem, tables []*rejectTable, rowOf map[pipeline.RowRef]int) (rejectPlace, bool) {
	o := p.Origin
	for _, t := range tables {
		if t.src.file != o.File || t.src.sheet != o.Sheet {
			continue
		}
		col := 0
		if c := o.Column; c > 0 && c <= len(t.cols) {
			col = t.cols[c-1] + 1
		}
		if o.Row == t.raw.HeaderRow {
			return rejectPlace{1, col}, true
		}
		if r, ok := rowOf[pipeline.RowRef{File: o.File, Sheet: o.Sheet, Row: o.Row}]; ok {
			return rejectPlace{r, col}, true
		}
	}
	return rejectPlace{}, false
}

// rejectRowNumbers numbers the tables' rows in the rejects table, from 2.
func rejectRowNumbers(tables []*rejectTable) map[pipeline.RowRef]int {
	rowOf := map[pipeline.RowRef]int{}
	n := 2
	for _, t := range tables {
		for _, r := range t.src.rows {
			if _, ok := t.raw.Rows[r]; !ok {
				continue // a row with no record (a header or title row): the header stands for it
			}
			rowOf[pipeline.RowRef{File: t.src.file, Sheet: t.src.sheet, Row: r}] = n
			n++
		}
	}
	return rowOf
}

// uniqueSheetName returns name made a valid sheet name (at most 31
// characters, none of []:*?/\) not in used.
func uniqueSheetName(name string, used map[string]bool) string {
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]:*?/\`, r) {
			return '_'
		}
		return r
	}, name)
	if name == "" || strings.EqualFold(name, AnnotateSheet) {
		name = "Sheet"
	}
	base := []rune(name)
	for i := 1; ; i++ {
		cand := string(base)
		if i > 1 {
			suffix := " (" + strconv.Itoa(i) + ")"
			cand = string(base[:min(len(base), 31-len(suffix))]) + suffix
		} else if len(base) > 31 {
			cand = string(base[:31])
		}
		if !used[strings.ToLower(cand)] {
			used[strings.ToLower(cand)] = true
			return cand
		}
	}
}

// tempBeside returns a temporary file name in path's folder, for a
// workbook that is annotated into path.
func tempBeside(path string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".eepipe-rejects-*.xlsx")
	if err != nil {
		return "", err
	}
	name := f.Name()
	return name, f.Close()
}
