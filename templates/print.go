package templates

import (
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/xuri/excelize/v2"
)

// PrintSetup says how one sheet prints: every workbook eepipe writes sets
// one per visible sheet, so that every printed (or PDF) page is readable:
// a sheet that fits one page width at a readable scale is fitted to it; a
// wide one (Scale) prints across pages at a fixed scale, repeating its
// label columns and header rows on every page.
type PrintSetup struct {
	// Portrait prints upright; the default is landscape, which suits
	// the wide grids and tables.
	Portrait bool
	// TitleFirst and TitleLast are the rows repeated at the top of every
	// page (the header); 0 repeats none.
	TitleFirst, TitleLast int
	// Scale, when not 0, prints the sheet at that percentage across as
	// many pages wide as it needs, instead of fitting it to one page
	// width (which shrinks a wide sheet's text below reading size).
	Scale int
	// TitleCols repeats the first TitleCols columns (the labels) at the
	// left of every page; 0 repeats none.
	TitleCols int
	// ColBreaks are columns (1-based) that start a printed page: where a
	// table ends and what is beside it (chart data, charts) begins.
	ColBreaks []int
	// Area, when not "", is the range that prints (such as "A1:L40"):
	// the columns after it are for the screen.
	Area string
	// AcrossFirst prints a sheet wider than a page across, then down: the
	// pages of one set of rows follow each other.
	AcrossFirst bool
}

// WidePrint is the print setup of a wide table with its header in row 1:
// at WideScale across pages, each repeating the header row and the first
// labelCols columns (what names a row).
func WidePrint(labelCols int) PrintSetup {
	return PrintSetup{TitleFirst: 1, TitleLast: 1, Scale: WideScale, TitleCols: labelCols}
}

// WideScale is the print scale of a wide sheet (PrintSetup.Scale): text
// of the default 11 pt prints at 8.8 pt, 9 pt notes at 7.2 pt.
const WideScale = 80

// Print margins in inches: narrow, leaving room for the footer.
var (
	printSide   = 0.4
	printTop    = 0.55
	printHF     = 0.3
	printA4     = 9 // paper size code of A4
	printOneWid = 1
	printAnyHi  = 0 // as many pages down as needed
	printAcross = "overThenDown"
)

// SetPrintLayout gives sheet its page setup: A4, landscape unless
// p.Portrait, fitted to one page wide (as many pages down as needed) or,
// with p.Scale, at that scale across as many pages as needed with the
// column breaks p.ColBreaks, narrow margins, a footer with the sheet name
// and page numbers, and the print titles (rows and label columns). On a sheet written with a StreamWriter, call it before
// the writer's Flush: the page setup is written with the sheet; on other
// sheets call it after AutoFilter, which replaces the sheet's properties.
func SetPrintLayout(f *excelize.File, sheet string, p PrintSetup) error {
	orient := "landscape"
	if p.Portrait {
		orient = "portrait"
	}
	fit := p.Scale == 0
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	layout := &excelize.PageLayoutOptions{Size: &printA4, Orientation: &orient, FitToWidth: &printOneWid, FitToHeight: &printAnyHi}
	if !fit {
		scale := uint(p.Scale)
		layout.AdjustTo = &scale
	}
	if p.AcrossFirst {
		layout.PageOrder = &printAcross
	}
	if err := f.SetPageLayout(sheet, layout); err != nil {
		return err
	}
	for _, c := range p.ColBreaks {
		name, err := excelize.ColumnNumberToName(c)
		if err != nil {
			return err
		}
		if err := f.InsertPageBreak(sheet, name+"1"); err != nil {
			return err
		}
	}
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{
		Left: &printSide, Right: &printSide, Top: &printTop, Bottom: &printTop, Header: &printHF, Footer: &printHF,
	}); err != nil {
		return err
	}
	if err := f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: "&L&A&RPage &P of &N"}); err != nil {
		return err
	}
	if ref := p.titlesRef(sheet); ref != "" {
		if err := setPrintTitles(f, sheet, ref); err != nil {
			return err
		}
	}
	if p.Area != "" {
		from, to, _ := strings.Cut(p.Area, ":")
		ref := xlsx.QuoteSheet(sheet) + "!" + absRef(from) + ":" + absRef(to)
		if err := f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", Scope: sheet, RefersTo: ref}); err != nil {
			return err
		}
	}
	return nil
}

// absRef returns a cell reference with its column and row absolute
// ("A1" -> "$A$1"); a reference it cannot read, as it is.
func absRef(cell string) string {
	col, row, err := excelize.CellNameToCoordinates(cell)
	if err != nil {
		return cell
	}
	ref, _ := excelize.CoordinatesToCellName(col, row, true)
	return ref
}

// titlesRef returns the sheet's print titles (the repeated columns, then
// the repeated rows, as Excel writes them), or "" for none.
func (p PrintSetup) titlesRef(sheet string) string {
	var refs []string
	if p.TitleCols > 0 {
		last, _ := excelize.ColumnNumberToName(p.TitleCols)
		refs = append(refs, fmt.Sprintf("%s!$A:$%s", xlsx.QuoteSheet(sheet), last))
	}
	if p.TitleFirst > 0 {
		refs = append(refs, fmt.Sprintf("%s!$%d:$%d", xlsx.QuoteSheet(sheet), p.TitleFirst, max(p.TitleLast, p.TitleFirst)))
	}
	return strings.Join(refs, ",")
}

// setPrintTitles adds the sheet's _xlnm.Print_Titles name. excelize's
// SetDefinedName looks every existing name's sheet up by listing all the
// sheets, which over an export of 2,000 plan sheets, one name each, is
// cubic (minutes); once the workbook has names, the name is appended here
// directly, the duplicate check comparing sheet indexes.
func setPrintTitles(f *excelize.File, sheet, ref string) error {
	idx, err := f.GetSheetIndex(sheet)
	if err != nil {
		idx = -1
	}
	return addPrintTitles(f, sheet, idx, ref)
}

// addPrintTitles is setPrintTitles for the sheet at index idx.
func addPrintTitles(f *excelize.File, sheet string, idx int, ref string) error {
	const name = "_xlnm.Print_Titles"
	wb := f.WorkBook
	if idx < 0 || wb == nil || wb.DefinedNames == nil || len(wb.DefinedNames.DefinedName) == 0 {
		return f.SetDefinedName(&excelize.DefinedName{Name: name, Scope: sheet, RefersTo: ref})
	}
	for _, dn := range wb.DefinedNames.DefinedName {
		if dn.Name == name && dn.LocalSheetID != nil && *dn.LocalSheetID == idx {
			return excelize.ErrDefinedNameDuplicate
		}
	}
	d := printZero(wb.DefinedNames.DefinedName[0])
	d.Name, d.Data, d.LocalSheetID = name, ref, &idx
	wb.DefinedNames.DefinedName = append(wb.DefinedNames.DefinedName, d)
	return nil
}

// printZero returns the zero value of v's type (excelize's defined name
// type is not exported).
func printZero[T any](T) T {
	var z T
	return z
}
