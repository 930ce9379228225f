package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// freeSheetName returns name, or "name (2)", "name (3)" ..., the first
// not among the workbook's sheets (compared as Excel does, ignoring case).
func freeSheetName(sheets []string, name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(sheets, func(s string) bool { return strings.EqualFold(s, n) })
	}
	out := name
	for i := 2; taken(out); i++ {
		out = fmt.Sprintf("%s (%d)", name, i)
	}
	return out
}

// rrSheetsFirst moves the named sheets, in order, to the front of f's
// sheets, renumbering the sheet-scoped defined names (print titles,
// filters) with their sheets; excelize's MoveSheet leaves them on the
// sheet that takes the old position, and walks every worksheet.
func rrSheetsFirst(f *excelize.File, names ...string) error {
	wb := f.WorkBook
	if wb == nil || wb.Sheets.Sheet == nil {
		return errors.New("reconciliation report: the workbook has no sheet list")
	}
	old := wb.Sheets.Sheet
	moved := make([]int, 0, len(old)) // new position -> old index
	for _, n := range names {
		i := -1
		for k := range old {
			if old[k].Name == n {
				i = k
			}
		}
		if i < 0 {
			return fmt.Errorf("reconciliation report: no sheet %q", n)
		}
		moved = append(moved, i)
	}
	for i := range old {
		if !slices.Contains(moved, i) {
			moved = append(moved, i)
		}
	}
	newIdx := make([]int, len(old))
	sheets := slices.Clone(old)
	for to, from := range moved {
		sheets[to] = old[from]
		newIdx[from] = to
	}
	wb.Sheets.Sheet = sheets
	if wb.DefinedNames != nil {
		for i, d := range wb.DefinedNames.DefinedName {
			if d.LocalSheetID != nil && *d.LocalSheetID >= 0 && *d.LocalSheetID < len(newIdx) {
				n := newIdx[*d.LocalSheetID]
				wb.DefinedNames.DefinedName[i].LocalSheetID = &n
			}
		}
	}
	if wb.BookViews != nil {
		for i := range wb.BookViews.WorkBookView {
			wb.BookViews.WorkBookView[i].FirstSheet = 0
		}
	}
	return nil
}

// rrActivateSheet makes sheet (at idx) the workbook's active sheet
// touching only the worksheets whose tab is selected: excelize's
// SetActiveSheet decodes every worksheet of the workbook to clear their
// selection. The selected tabs are found by scanning the head of each
// sheet of src (its sheet views come before its cells). It reports false
// when it cannot, for SetActiveSheet to do it.
func rrActivateSheet(f *excelize.File, src, sheet string, idx int) bool {
	wb := f.WorkBook
	if wb == nil || wb.BookViews == nil || len(wb.BookViews.WorkBookView) == 0 {
		return false
	}
	fh, err := os.Open(src)
	if err != nil {
		return false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return false
	}
	book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{})
	if err != nil {
		return false
	}
	for _, info := range book.Sheets {
		if info.Path == "" || !tabSelected(book, info) {
			continue
		}
		if !rrClearTabSelected(f, info.Name, info.Path) {
			return false
		}
	}
	wb.BookViews.WorkBookView[0].ActiveTab = idx
	return true
}

// rrNameDefaultFont gives the workbook's first font a name when it has
// none, and returns the function that takes it away again. It fails when
// the style sheet has no font at all.
func rrNameDefaultFont(f *excelize.File) (undo func(), err error) {
	undo = func() {}
	defer func() {
		if recover() != nil {
			undo, err = func() {}, errors.New("the style sheet's first font cannot be read")
		}
	}()
	if _, err := f.GetStyle(0); err != nil { // reads the style sheet
		return undo, err
	}
	if f.Styles == nil || f.Styles.Fonts == nil || len(f.Styles.Fonts.Font) == 0 || f.Styles.Fonts.Font[0] == nil {
		return undo, errors.New("the style sheet has no font")
	}
	font := f.Styles.Fonts.Font[0]
	if font.Name != nil && font.Name.Val != nil {
		return undo, nil
	}
	field := reflect.ValueOf(font).Elem().FieldByName("Name")
	old := reflect.ValueOf(font.Name)
	name := reflect.New(field.Type().Elem())
	calibri := "Calibri"
	name.Elem().FieldByName("Val").Set(reflect.ValueOf(&calibri))
	field.Set(name)
	return func() { field.Set(old) }, nil
}

// rrClearTabSelected clears the tab selection of one worksheet (at path
// in the package): excelize v2.11 has no option for it but
// SetActiveSheet's walk over every sheet, so the decoded worksheet's
// sheet view is set through reflection. It reports false when the
// worksheet is not as expected.
func rrClearTabSelected(f *excelize.File, name, path string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if _, err := f.GetSheetView(name, 0); err != nil { // decodes the worksheet
		return false
	}
	ws, loaded := f.Sheet.Load(path)
	if !loaded {
		return false
	}
	v := reflect.ValueOf(ws)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	views := v.Elem().FieldByName("SheetViews")
	if !views.IsValid() || views.Kind() != reflect.Pointer || views.IsNil() {
		return true // no sheet view: nothing selected
	}
	list := views.Elem().FieldByName("SheetView")
	for i := 0; list.IsValid() && i < list.Len(); i++ {
		sel := list.Index(i).FieldByName("tabSelected")
		if !sel.IsValid() || sel.Kind() != reflect.Bool || !sel.CanSet() {
			return false
		}
		sel.SetBool(false)
	}
	return list.IsValid()
}

// tabSelected reports whether a worksheet's first sheet view has its
// tab selected, reading the sheet's XML only up to its cells.
func tabSelected(book *xlsx.Book, info xlsx.Sheet) bool {
	if info.Path == "" {
		return false // a chart sheet (the streamed copy clears it: rrChartSheetsSelected)
	}
	rc, err := book.Open(info.Path)
	if err != nil {
		return true // let SetSheetView clear it, to be sure
	}
	defer rc.Close()
	sc := xlsx.NewScanner(rc)
	for sc.Next() == nil {
		if sc.Kind != xlsx.TokStart {
			continue
		}
		switch string(sc.Name) {
		case "sheetView":
			v := string(sc.Attr("tabSelected"))
			return v == "1" || v == "true"
		case "sheetData":
			return false
		}
	}
	return false
}

// rrAnnotateCell fills the cell keeping the rest of its style (number
// format, font, borders) and adds a comment.
func rrAnnotateCell(f *excelize.File, sheet, cell string, n *rrNote, styles map[[2]any]int, comments map[string]map[string]excelize.Comment) error {
	old, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		return err
	}
	key := [2]any{old, n.Fill}
	id, ok := styles[key]
	if !ok {
		st := xlsx.ReusableStyle(f, old)
		st.Fill = templates.SolidFill(n.Fill)
		id, err = f.NewStyle(st)
		if err != nil {
			return err
		}
		styles[key] = id
	}
	if err := f.SetCellStyle(sheet, cell, cell, id); err != nil {
		return err
	}
	text := strings.Join(n.lines, "\n")
	// A comment the workbook already has on the cell is kept below ours.
	// The sheet's comments are read once (each cell is annotated once).
	byCell, read := comments[sheet]
	if !read {
		byCell = map[string]excelize.Comment{}
		if existing, err := f.GetComments(sheet); err == nil {
			for _, c := range existing {
				byCell[strings.ToUpper(c.Cell)] = c
			}
		}
		comments[sheet] = byCell
	}
	if c, ok := byCell[strings.ToUpper(cell)]; ok {
		{
			{
				prev := c.Text
				if prev == "" {
					for _, p := range c.Paragraph {
						prev += p.Text
					}
				}
				if prev != "" {
					text += "\n---\n" + prev
				}
				if err := f.DeleteComment(sheet, cell); err != nil {
					return err
				}
			}
		}
	}
	return f.AddComment(sheet, excelize.Comment{
		Cell: cell, Author: commentAuthor,
		Paragraph: []excelize.RichTextRun{
			{Text: commentAuthor + ":\n", Font: &excelize.Font{Bold: true}},
			{Text: text},
		},
		Width: 260, Height: uint(60 + 16*strings.Count(text, "\n")),
	})
}

func rrSameSourceFile(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
