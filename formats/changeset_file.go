package formats

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// ChangeSetSheet is the sign-off workbook's readable sheet; ChangeSetData
// is its hidden sheet holding the signed change set itself (column A,
// split into cells of at most changeSetChunk characters).
const (
	ChangeSetSheet = "Change set"
	ChangeSetData  = "eepipe-change-set"
	changeSetChunk = 30000
)

// maxChangeSetBytes bounds what is read of a change set file.
const maxChangeSetBytes = 256 << 20

// WriteChangeSet writes s to path: JSON for .json, a sign-off workbook for
// .xlsx (a readable sheet of every change with the service value it was
// computed against, and the signed change set on a hidden sheet).
func WriteChangeSet(path string, s *pipeline.SavedChangeSet) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return WriteFileAtomic(path, func(w io.Writer) error { return pipeline.EncodeSaved(w, s) })
	case ".xlsx":
		b, err := pipeline.MarshalSaved(s)
		if err != nil {
			return err
		}
		return writeChangeSetXLSX(path, s, string(b))
	}
	return fmt.Errorf("%s: a change set is written as .json or .xlsx", path)
}

func writeChangeSetXLSX(path string, s *pipeline.SavedChangeSet, data string) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", ChangeSetSheet); err != nil {
		return err
	}
	sh := ChangeSetSheet
	rows := changeSetSheetRows(s)
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(sh, cell, &r); err != nil {
			return err
		}
	}
	bold, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	f.SetCellStyle(sh, "A1", "A1", bold)
	hdr := len(rows) - countChangeRows(s)
	a, _ := excelize.CoordinatesToCellName(1, hdr)
	b, _ := excelize.CoordinatesToCellName(9, hdr)
	f.SetCellStyle(sh, a, b, bold)
	f.SetColWidth(sh, "A", "A", 16)
	f.SetColWidth(sh, "B", "B", 36)
	f.SetColWidth(sh, "F", "F", 44)
	f.SetColWidth(sh, "G", "I", 14)

	if _, err := f.NewSheet(ChangeSetData); err != nil {
		return err
	}
	for i := 0; i*changeSetChunk < len(data); i++ {
		end := min((i+1)*changeSetChunk, len(data))
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetCellStr(ChangeSetData, cell, data[i*changeSetChunk:end]); err != nil {
			return err
		}
	}
	if err := f.SetSheetVisible(ChangeSetData, false, true); err != nil {
		return err
	}
	if err := templates.SetPrintLayout(f, ChangeSetSheet, templates.PrintSetup{}); err != nil {
		return err
	}
	return WriteWorkbook(path, f)
}

// changeSetSheetRows returns the rows of the sign-off sheet: the heading
// (with the "Signed off by" row a client fills in), the column titles,
// then one row per change.
func changeSetSheetRows(s *pipeline.SavedChangeSet) [][]any {
	rows := [][]any{
		{"eepipe change set — for sign-off"},
		{"Computed", s.Created.Format("2006-01-02 15:04 UTC")},
		{"Service", s.Service},
		{"Accounts", strings.Join(s.Accounts, ", ")},
		{"Signature", s.Signature},
	}
	for _, fl := range s.Files {
		rows = append(rows, []any{"Input file", fl.Path, fl.SHA256})
	}
	rows = append(rows,
		[]any{"Applying it writes exactly these values, and nothing at all if any value on the service no longer matches the \"service value\" column."},
		[]any{signedOffBy, "", "Date", ""},
		[]any{},
		[]any{"Account", "Plan", "Year", "Financial year", "Target type", "Counter or field", "Service value", "New value", "Cell"},
	)
	for _, p := range s.Plans {
		if p.Create != nil {
			rows = append(rows, []any{p.Account, p.Title, "", "", "", "(new plan)", "", fmt.Sprintf("%s to %s", p.Create.StartDate, p.Create.EndDate), ""})
		}
		for _, fd := range p.Fields {
			rows = append(rows, []any{p.Account, p.Title, "", "", "", fd.Field, fd.Expected, fd.New, fd.Cell})
		}
		for _, t := range p.Targets {
			for _, c := range t.Counters {
				var exp any = "(prefill)"
				if c.Expected != nil {
					exp = *c.Expected
				}
				rows = append(rows, []any{p.Account, p.Title, t.YearNumber, t.FinancialYear, t.TargetType, c.Counter, exp, c.New, c.Cell})
			}
		}
	}
	return rows
}

// signedOffBy heads the row of the sign-off sheet a client fills in.
const signedOffBy = "Signed off by"

// checkSignOffSheet checks that the readable sheet of a sign-off workbook
// still shows exactly the signed change set s: apply writes the hidden
// signed set, so a value typed over on the readable sheet, or a row
// deleted or added there, would otherwise be silently ignored. Only the
// "Signed off by" row (and what is typed below the table outside its
// columns) may be filled in.
func checkSignOffSheet(f *excelize.File, s *pipeline.SavedChangeSet) error {
	if !slices.Contains(f.GetSheetList(), ChangeSetSheet) {
		return fmt.Errorf("the sign-off sheet %q is missing: the workbook was edited after `eepipe diff -o` wrote it; nothing was sent. "+
			"Write a new change set with eepipe diff -o", ChangeSetSheet)
	}
	got, err := f.GetRows(ChangeSetSheet, excelize.Options{RawCellValue: true})
	if err != nil {
		return fmt.Errorf("the sign-off sheet %q: %w", ChangeSetSheet, err)
	}
	edited := func(col, row int, have, want string) error {
		cell, _ := excelize.CoordinatesToCellName(col, row)
		return fmt.Errorf("the sign-off sheet %q was edited at %s: it reads %q, the signed change set says %q; "+
			"apply writes the signed values, so nothing was sent. Write a new change set with eepipe diff -o (and have it signed off again)",
			ChangeSetSheet, cell, have, want)
	}
	at := func(r, c int) string {
		if r < len(got) && c < len(got[r]) {
			return strings.TrimSpace(got[r][c])
		}
		return ""
	}
	want := changeSetSheetRows(s)
	const cols = 9 // A to I: the table's columns
	for r, row := range want {
		if len(row) > 0 && row[0] == signedOffBy {
			continue
		}
		for c := range cols {
			w := ""
			if c < len(row) {
				w = strings.TrimSpace(fmt.Sprint(row[c]))
			}
			if h := at(r, c); h != w {
				return edited(c+1, r+1, h, w)
			}
		}
	}
	// A change row added below the table.
	for r := len(want); r < len(got); r++ {
		for c := range cols {
			if h := at(r, c); h != "" {
				return edited(c+1, r+1, h, "")
			}
		}
	}
	return nil
}

func countChangeRows(s *pipeline.SavedChangeSet) int {
	n := 0
	for _, p := range s.Plans {
		if p.Create != nil {
			n++
		}
		n += len(p.Fields)
		for _, t := range p.Targets {
			n += len(t.Counters)
		}
	}
	return n
}

// ErrNotChangeSet is returned by ReadChangeSet for a file that is not a
// saved change set (a workbook of plans).
var ErrNotChangeSet = pipeline.ErrNotChangeSet

// ReadChangeSet reads a change set written by WriteChangeSet and checks
// its signature. A workbook without the change set sheet, or JSON that is
// not a change set, is ErrNotChangeSet.
func ReadChangeSet(path string) (*pipeline.SavedChangeSet, error) {
	var plans []pipeline.SavedPlan
	s, err := scanChangeSet(path, nil, true, func(_ *pipeline.SavedChangeSet, _ int, p *pipeline.SavedPlan, _ [sha256.Size]byte) error {
		plans = append(plans, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Plans = plans
	return s, nil
}

// ChangeSetFile is a change set file read again for each pass of its
// apply (pipeline.OpenSaved): Read is its pipeline.SavedReader. The first
// Read records the file's size and SHA-256, and checks a sign-off
// workbook's readable sheet; a later Read of a file of another size or
// SHA-256 fails with pipeline.ErrSetChanged (and each plan read again is
// compared with the one verified by pipeline.StreamedSet.Plans, before it
// is used).
type ChangeSetFile struct {
	Path string
	// Size and SHA256 are the file's, as the first Read found it.
	Size   int64
	SHA256 string
	read   bool
}

// Read reads the file once, handing each plan to fn as it is read. A JSON
// change set holds one plan at a time; a sign-off workbook is held by
// excelize as it is read, and on the first Read its plans are kept to
// check its readable sheet.
func (f *ChangeSetFile) Read(fn func(h *pipeline.SavedChangeSet, i int, p *pipeline.SavedPlan, digest [sha256.Size]byte) error) (*pipeline.SavedChangeSet, error) {
	return scanChangeSet(f.Path, f, !f.read, fn)
}

// scanChangeSet reads the change set at path, handing each plan to fn.
// With f, it computes the file's size and SHA-256 as it reads: the first
// time they are recorded in f, later they must be f's. With sheet, a
// sign-off workbook's readable sheet is checked against its plans (kept
// for that while it is read).
func scanChangeSet(path string, f *ChangeSetFile, sheet bool, fn func(*pipeline.SavedChangeSet, int, *pipeline.SavedPlan, [sha256.Size]byte) error) (*pipeline.SavedChangeSet, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		if strings.EqualFold(filepath.Ext(path), ".json") {
			what, _, _ := strings.Cut(readNotRegular(st.Mode()), ";")
			return nil, fmt.Errorf("%s: %s; a change set is a regular .json or .xlsx file", path, what)
		}
		return nil, ErrNotChangeSet
	}
	if st.Size() > maxChangeSetBytes {
		return nil, fmt.Errorf("%s: %d bytes is more than a change set may hold", path, st.Size())
	}
	changed := func(what string) error {
		return fmt.Errorf("%s: %w: %s; nothing more was sent. Check who is writing the file, then apply it again",
			path, pipeline.ErrSetChanged, what)
	}
	if f != nil && f.read && st.Size() != f.Size {
		return nil, changed(fmt.Sprintf("it held %d bytes when it was verified and now holds %d", f.Size, st.Size()))
	}
	sum := sha256.New()
	var n int64
	done := func() error {
		if f == nil {
			return nil
		}
		got := hex.EncodeToString(sum.Sum(nil))
		if !f.read {
			f.read, f.Size, f.SHA256 = true, n, got
			return nil
		}
		if n != f.Size || got != f.SHA256 {
			return changed("its SHA-256 is not the one verified")
		}
		return nil
	}
	var s *pipeline.SavedChangeSet
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		// Read as it is decoded, plan by plan: the file is not held.
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		cr := &countingReader{r: io.TeeReader(io.LimitReader(fh, maxChangeSetBytes+1), sum)}
		if s, err = pipeline.ScanSaved(cr, fn); err != nil {
			return nil, savedErr(path, err)
		}
		if _, err := io.Copy(io.Discard, cr); err != nil {
			return nil, err
		}
		n = cr.n
	case ".xlsx":
		// Only a workbook that declares the change set sheet is opened with
		// excelize, within the change set bound: any other workbook (an
		// input, perhaps a decompression bomb) is left to the bounded reader.
		if !declaresChangeSetSheet(path) {
			return nil, ErrNotChangeSet
		}
		if f != nil {
			fh, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			n, err = io.Copy(sum, io.LimitReader(fh, maxChangeSetBytes+1))
			fh.Close()
			if err != nil {
				return nil, err
			}
		}
		wb, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: maxChangeSetBytes, UnzipXMLSizeLimit: maxChangeSetBytes})
		if err != nil {
			return nil, ErrNotChangeSet
		}
		defer wb.Close()
		if !slices.Contains(wb.GetSheetList(), ChangeSetData) {
			return nil, ErrNotChangeSet
		}
		rows, err := wb.Rows(ChangeSetData)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer rows.Close()
		var plans []pipeline.SavedPlan
		keep := func(h *pipeline.SavedChangeSet, i int, p *pipeline.SavedPlan, d [sha256.Size]byte) error {
			if sheet {
				plans = append(plans, *p)
			}
			return fn(h, i, p, d)
		}
		if s, err = pipeline.ScanSaved(&rowsReader{rows: rows}, keep); err != nil {
			return nil, savedErr(path, err)
		}
		if sheet {
			full := *s
			full.Plans = plans
			if err := checkSignOffSheet(wb, &full); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	default:
		return nil, ErrNotChangeSet
	}
	if err := done(); err != nil {
		return nil, err
	}
	return s, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// savedErr names the file in a change set's error, keeping ErrNotChangeSet
// as it is.
func savedErr(path string, err error) error {
	if errors.Is(err, pipeline.ErrNotChangeSet) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// rowsReader reads the first cells of a sheet's rows, in order, as one
// text: the signed change set of a sign-off workbook, split into cells by
// writeChangeSetXLSX.
type rowsReader struct {
	rows *excelize.Rows
	buf  string
	err  error
}

func (r *rowsReader) Read(p []byte) (int, error) {
	for r.buf == "" {
		if r.err != nil {
			return 0, r.err
		}
		if !r.rows.Next() {
			if r.err = r.rows.Error(); r.err == nil {
				r.err = io.EOF
			}
			continue
		}
		cols, err := r.rows.Columns()
		if err != nil {
			r.err = err
			continue
		}
		if len(cols) > 0 {
			r.buf = cols[0]
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// declaresChangeSetSheet reports whether the workbook at path is a zip
// archive whose workbook part (read within 16 MiB) names the change set
// sheet, and whose parts unpack to at most maxChangeSetBytes: a cheap test
// that reads nothing of the sheets.
func declaresChangeSetSheet(path string) bool {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return false
	}
	defer zr.Close()
	var total uint64
	var wb *zip.File
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if f.Name == "xl/workbook.xml" {
			wb = f
		}
	}
	if wb == nil || total > maxChangeSetBytes {
		return false
	}
	rc, err := wb.Open()
	if err != nil {
		return false
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 16<<20))
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte(`"`+ChangeSetData+`"`))
}
