package reports

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
)

// rejectsErrorsColumn is the last column of a CSV rejects file: each row's
// problems, which a later read ignores (an unknown column, a warning).
const rejectsErrorsColumn = "eepipe_errors"

// writeRejectsCSV writes the tables' rows as one CSV table with their
// problems in rejectsErrorsColumn; it returns the rows written.
func writeRejectsCSV(path string, tables []*rejectTable, ps pipeline.Problems) (int, error) {
	header := rejectsHeader(tables)
	errCol := -1
	for i, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), rejectsErrorsColumn) {
			errCol = i // an earlier rejects file's: its texts are replaced
		}
	}
	if errCol < 0 {
		errCol = len(header)
		header = append(header, rejectsErrorsColumn)
	}
	rowOf := rejectRowNumbers(tables)
	notes := map[int][]string{}
	for _, p := range ps {
		at, ok := placeProblem(p, tables, rowOf)
		if !ok {
			continue
		}
		where := "row"
		if at.col > 0 {
			where = header[at.col-1]
		}
		notes[at.row] = append(notes[at.row], fmt.Sprintf("%s %s: %s", p.Severity, where, p.Message))
	}
	n := 0
	err := xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		cw := table.NewCSVWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		out := 2
		for _, t := range tables {
			for _, r := range t.src.rows {
				fields, ok := t.raw.Rows[r]
				if !ok {
					continue
				}
				rec := make([]string, len(header))
				for i, v := range fields {
					if i < len(t.cols) {
						rec[t.cols[i]] = v
					}
				}
				rec[errCol] = strings.Join(notes[out], "; ")
				if err := cw.Write(rec); err != nil {
					return err
				}
				out++
				n++
			}
		}
		cw.Flush()
		return cw.Error()
	})
	return n, err
}

// rejectsTableSheet is the sheet of an .xlsx rejects file's flat table.
const rejectsTableSheet = "Rejected plans"

// writeRejectsFlatXLSX writes the tables' rows as one flat table sheet,
// cells copied from workbooks with their values and styles, then marks
// the problems (AnnotateWorkbook).
func writeRejectsFlatXLSX(path string, tables []*rejectTable, ps pipeline.Problems) (int, error) {
	header := rejectsHeader(tables)
	dst := excelize.NewFile()
	defer dst.Close()
	if err := dst.SetSheetName("Sheet1", rejectsTableSheet); err != nil {
		return 0, err
	}
	for i, h := range header {
		if err := dst.SetCellStr(rejectsTableSheet, xlsx.ColumnLetters(i+1)+"1", h); err != nil {
			return 0, err
		}
	}
	cp := newCellCopier(dst)
	out := 2
	for _, t := range tables {
		for _, r := range t.src.rows {
			fields, ok := t.raw.Rows[r]
			if !ok {
				continue
			}
			for i, v := range fields {
				if i >= len(t.cols) || v == "" {
					continue
				}
				var err error
				if t.book != nil {
					err = cp.copy(t.book, t.src.sheet, i+1, r, rejectsTableSheet, t.cols[i]+1, out)
				} else {
					err = dst.SetCellStr(rejectsTableSheet, xlsx.ColumnLetters(t.cols[i]+1)+strconv.Itoa(out), v)
				}
				if err != nil {
					return 0, err
				}
			}
			out++
		}
		if t.book != nil {
			t.book.Close()
		}
	}
	rowOf := rejectRowNumbers(tables)
	var marked pipeline.Problems
	for _, p := range ps {
		if at, ok := placeProblem(p, tables, rowOf); ok {
			q := p
			q.Origin = pipeline.Origin{Sheet: rejectsTableSheet, Row: at.row, Column: at.col, Header: p.Origin.Header}.WithCell()
			marked = append(marked, q)
		}
	}
	return out - 2, annotateInto(dst, path, marked)
}

// writeRejectsGrid copies the grid sheets whole into a workbook, then
// marks their problems (AnnotateWorkbook).
func writeRejectsGrid(path string, grids []*rejectSource, ps pipeline.Problems) error {
	dst := excelize.NewFile()
	defer dst.Close()
	books := map[string]*excelize.File{}
	defer func() {
		for _, b := range books {
			b.Close()
		}
	}()
	cp := newCellCopier(dst)
	used := map[string]bool{}
	var marked pipeline.Problems
	for i, g := range grids {
		src := books[g.file]
		if src == nil {
			limit, err := annotateCheckSize(g.file)
			if err != nil {
				return fmt.Errorf("the rejected sheets of %s: %w", g.file, err)
			}
			if src, err = annotateOpen(g.file, limit); err != nil {
				return fmt.Errorf("the rejected sheets of %s: %s", g.file, xlsx.ExcelizeError(err))
			}
			books[g.file] = src
		}
		name := uniqueSheetName(g.sheet, used)
		if i == 0 {
			if err := dst.SetSheetName("Sheet1", name); err != nil {
				return err
			}
		} else if _, err := dst.NewSheet(name); err != nil {
			return err
		}
		if err := cp.sheet(src, g.sheet, name); err != nil {
			return fmt.Errorf("copying %s sheet %s: %w", g.file, g.sheet, err)
		}
		for _, p := range ps {
			if p.Origin.File == g.file && p.Origin.Sheet == g.sheet {
				q := p
				q.Origin.File, q.Origin.Sheet = "", name
				q.Origin = q.Origin.WithCell()
				marked = append(marked, q)
			}
		}
	}
	return annotateInto(dst, path, marked)
}

// annotateInto writes dst to a temporary file beside path and writes its
// annotated copy (AnnotateWorkbook) to path; the problems' File is the
// temporary file's.
func annotateInto(dst *excelize.File, path string, ps pipeline.Problems) error {
	tmp, err := tempBeside(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp)
	if err := dst.SaveAs(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	for i := range ps {
		ps[i].Origin.File = tmp
	}
	_, err = AnnotateWorkbook(tmp, path, ps)
	return err
}

// cellCopier copies cells between workbooks with their values and styles.
type cellCopier struct {
	dst    *excelize.File
	styles map[*excelize.File]map[int]int
}

func newCellCopier(dst *excelize.File) *cellCopier {
	return &cellCopier{dst: dst, styles: map[*excelize.File]map[int]int{}}
}

// copy copies the cell (col, row) of src's sheet to the cell (dcol, drow)
// of dst's dsheet: a number (or date) as a number, a boolean as a
// boolean, text as text, a formula as the value it last had; its style
// (number format included) as it is.
func (c *cellCopier) copy(src *excelize.File, sheet string, col, row int, dsheet string, dcol, drow int) error {
	ref, _ := excelize.CoordinatesToCellName(col, row)
	dref, _ := excelize.CoordinatesToCellName(dcol, drow)
	raw, err := src.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
	if err != nil {
		return err
	}
	typ, _ := src.GetCellType(sheet, ref)
	switch typ {
	case excelize.CellTypeBool:
		err = c.dst.SetCellBool(dsheet, dref, raw == "1" || strings.EqualFold(raw, "true"))
	case excelize.CellTypeSharedString, excelize.CellTypeInlineString, excelize.CellTypeError:
		err = c.dst.SetCellStr(dsheet, dref, raw)
	default:
		if v, perr := strconv.ParseFloat(raw, 64); perr == nil {
			err = c.dst.SetCellFloat(dsheet, dref, v, -1, 64)
		} else if raw != "" {
			err = c.dst.SetCellStr(dsheet, dref, raw)
		}
	}
	if err != nil {
		return err
	}
	id, err := src.GetCellStyle(sheet, ref)
	if err != nil || id == 0 {
		return nil
	}
	memo := c.styles[src]
	if memo == nil {
		memo = map[int]int{}
		c.styles[src] = memo
	}
	nid, ok := memo[id]
	if !ok {
		if nid, err = c.dst.NewStyle(xlsx.ReusableStyle(src, id)); err != nil {
			return nil // the value is copied; its look is not
		}
		memo[id] = nid
	}
	return c.dst.SetCellStyle(dsheet, dref, dref, nid)
}

// sheet copies every cell of src's sheet to dst's dsheet at the same
// place, with its merged ranges and column widths.
func (c *cellCopier) sheet(src *excelize.File, sheet, dsheet string) error {
	rows, err := src.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		return err
	}
	widest := 0
	for r, row := range rows {
		widest = max(widest, len(row))
		for col, v := range row {
			if v == "" {
				continue
			}
			if err := c.copy(src, sheet, col+1, r+1, dsheet, col+1, r+1); err != nil {
				return err
			}
		}
	}
	merges, err := src.GetMergeCells(sheet)
	if err != nil {
		return err
	}
	for _, m := range merges {
		if err := c.dst.MergeCell(dsheet, m.GetStartAxis(), m.GetEndAxis()); err != nil {
			return err
		}
	}
	for col := 1; col <= widest; col++ {
		name := xlsx.ColumnLetters(col)
		if w, err := src.GetColWidth(sheet, name); err == nil {
			_ = c.dst.SetColWidth(dsheet, name, name, w)
		}
	}
	return nil
}
