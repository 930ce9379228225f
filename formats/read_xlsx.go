package formats

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// readXLSXLimited reads one workbook: the flat table when there is one,
// else the grid plan sheets.
func readXLSXLimited(file string, r io.ReaderAt, size int64, lim xlsx.Limits, cat *pipeline.Catalog, words *mapping.File, emit func(pipeline.Record), ps *pipeline.Problems) {
	fileOrigin := pipeline.Origin{File: file}
	book, err := xlsx.Open(r, size, lim)
	if err != nil {
		ps.Errorf(fileOrigin, "", "%v", err)
		return
	}
	sheet, headerRow, ok := table.FindSheet(book)
	if book.ScanErr == nil && book.SSTErr != nil && errors.Is(book.SSTErr, xlsx.ErrOversized) {
		book.ScanErr = book.SSTErr
	}
	if book.ScanErr != nil {
		o := book.ScanErrAt
		o.File = file
		ps.Errorf(o, "", "the workbook cannot be read: %v", book.ScanErr)
		return
	}
	if ok {
		for _, other := range book.Sheets {
			if other.Hidden || other.Name == sheet.Name {
				continue
			}
			if r, found := table.HeaderRow(book, other); found {
				ps.Warnf(pipeline.Origin{File: file, Sheet: other.Name, Row: r}, "",
					"this sheet also has a flat table header, but only one table is read from a workbook (sheet %q); move its rows there, or into a file of its own", sheet.Name)
			} else if at, grid := grid.SheetAt(book, file, other); grid {
				ps.Warnf(at, "",
					"sheet %q holds grid plan targets, but this workbook is read as a flat table (sheet %q); grid sheets are not read: move them to a workbook of their own", other.Name, sheet.Name)
			}
		}
		warnHiddenPlans(book, file, ps)
		table.ReadSheet(book, file, sheet, headerRow, cat, words, emit, ps)
		if book.SSTErr != nil {
			// A damaged table is an error even when no cell read needed
			// the entries past the damage.
			ps.Errorf(fileOrigin, "", "the workbook is damaged: %v", book.SSTErr)
		}
		return
	}
	found, ok := grid.ReadWorkbook(file, lim, book, cat, words, emit, ps)
	if !ok {
		return
	}
	if found > 0 {
		warnHiddenPlans(book, file, ps)
		return
	}
	if hiddenPlans := hiddenPlanSheets(book, file); len(hiddenPlans) > 0 {
		ps.Errorf(fileOrigin, "", "the plans of this workbook are on hidden sheets (%s), and hidden sheets are never read: unhide the sheet that holds the plans to apply (%s), save the workbook and run again",
			strings.Join(flatQuoteEach(hiddenPlans), ", "), unhideAdvice)
		return
	}
	ps.Errorf(fileOrigin, "", "no table found: no visible sheet has a header row (a row within the first %d rows with a cell reading target_type), and no sheet is a grid plan sheet", templates.FlatHeaderRows)
}

// hiddenPlanSheets returns the hidden sheets that hold plans: a flat table
// header, or grid plan targets in their first rows (grid.SheetAt). They
// are never read (docs/formats.md: hidden sheets are never read); the
// readers name them, so that a plan is not passed over in silence.
func hiddenPlanSheets(b *xlsx.Book, file string) []string {
	var out []string
	for _, s := range b.Sheets {
		if !s.Hidden || s.Path == "" || export.IsChartData(b, s) {
			continue // eepipe's own chart sums are no plans
		}
		if _, found := table.HeaderRow(b, s); found {
			out = append(out, s.Name)
		} else if _, grid := grid.SheetAt(b, file, s); grid {
			out = append(out, s.Name)
		}
	}
	return out
}

// unhideAdvice says how to show a hidden sheet.
const unhideAdvice = "in Excel right-click a sheet tab and choose Unhide; in LibreOffice choose Sheet > Show Sheet"

// warnHiddenPlans gives one warning for the hidden sheets that hold plans
// beside the sheets read (older versions of a plan, usually).
func warnHiddenPlans(b *xlsx.Book, file string, ps *pipeline.Problems) {
	hidden := hiddenPlanSheets(b, file)
	if len(hidden) == 0 {
		return
	}
	if len(hidden) == 1 {
		ps.Warnf(pipeline.Origin{File: file, Sheet: hidden[0]}, "", "the hidden sheet %q holds plan targets and is not read, as hidden sheets never are; if it holds the plans to apply, unhide it (%s)", hidden[0], unhideAdvice)
		return
	}
	ps.Warnf(pipeline.Origin{File: file}, "", "the hidden sheets %s hold plan targets and are not read, as hidden sheets never are; if one holds the plans to apply, unhide it (%s)", strings.Join(flatQuoteEach(hidden), ", "), unhideAdvice)
}

func flatQuoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
