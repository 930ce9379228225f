package reports

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/eepipe/eepipe/templates"
)

// The sign-off workbook of a change set is written with excelize's stream
// writer, its text as inline strings, and read again with the flat
// reader's zip and XML scanner (package xlsx), one row at a time: each
// pass over it holds one plan, whatever the set's size
// (docs/apply-and-state.md, "Saved change sets").

// signOffCols is the number of columns of the sign-off sheet's table (A
// to I); only they are compared with the signed set.
const signOffCols = 9

func writeChangeSetXLSX(path string, s *savedset.SavedChangeSet, data string) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", ChangeSetSheet); err != nil {
		return err
	}
	if err := templates.SetPrintLayout(f, ChangeSetSheet, templates.PrintSetup{}); err != nil {
		return err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(ChangeSetSheet)
	if err != nil {
		return err
	}
	for _, w := range []struct {
		from, to int
		width    float64
	}{{1, 1, 16}, {2, 2, 36}, {6, 6, 44}, {7, 9, 14}} {
		if err := sw.SetColWidth(w.from, w.to, w.width); err != nil {
			return err
		}
	}
	row := 0
	put := func(r []any, style int) error {
		row++
		cells := make([]any, len(r))
		for i, v := range r {
			cells[i] = excelize.Cell{StyleID: style, Value: v}
		}
		cell, _ := excelize.CoordinatesToCellName(1, row)
		return sw.SetRow(cell, cells)
	}
	head := changeSetHeadRows(s)
	for i, r := range head {
		style := 0
		if i == 0 || i == len(head)-1 {
			style = bold
		}
		if err := put(r, style); err != nil {
			return err
		}
	}
	for i := range s.Plans {
		for _, r := range changeSetPlanRows(&s.Plans[i]) {
			if err := put(r, 0); err != nil {
				return err
			}
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}

	if _, err := f.NewSheet(ChangeSetData); err != nil {
		return err
	}
	if sw, err = f.NewStreamWriter(ChangeSetData); err != nil {
		return err
	}
	for i := 1; data != ""; i++ {
		end := min(changeSetChunk, len(data))
		for end < len(data) && !utf8.RuneStart(data[end]) {
			end-- // a cell holds whole characters
		}
		cell, _ := excelize.CoordinatesToCellName(1, i)
		if err := sw.SetRow(cell, []any{data[:end]}); err != nil {
			return err
		}
		data = data[end:]
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	if err := f.SetSheetVisible(ChangeSetData, false, true); err != nil {
		return err
	}
	return xlsx.WriteWorkbook(path, f)
}

// changeSetHeadRows returns the rows of the sign-off sheet above its
// changes: the heading (with the sign-off, when the set has one, and the
// "Signed off by" row a client may type into) and, last, the column titles.
func changeSetHeadRows(s *savedset.SavedChangeSet) [][]any {
	rows := [][]any{
		{"eepipe change set — for sign-off"},
		{"Computed", s.Created.Format("2006-01-02 15:04 UTC")},
		{"Service", s.Service},
		{"Accounts", strings.Join(s.Accounts, ", ")},
		{signatureRow, s.Signature},
	}
	for _, fl := range s.Files {
		rows = append(rows, []any{"Input file", fl.Path, fl.SHA256})
	}
	rows = append(rows, []any{"Applying it writes exactly these values, and nothing at all if any value on the service no longer matches the \"service value\" column."})
	if o := s.SignedOff; o != nil {
		// From the sign-off, which apply verifies (docs/apply-and-state.md,
		// "Who can sign"); compared with the set as any other row.
		rows = append(rows, []any{signedOffWithKey, o.Signer, "Date", o.SignedAt.UTC().Format("2006-01-02 15:04 UTC"), "Key", o.PublicKey})
	}
	return append(rows,
		[]any{signedOffBy, "", "Date", ""},
		[]any{},
		[]any{"Account", "Plan", "Year", "Financial year", "Target type", "Counter or field", "Service value", "New value", "Cell"},
	)
}

// changeSetPlanRows returns the sign-off sheet's rows of one plan: one
// per change.
func changeSetPlanRows(p *savedset.SavedPlan) [][]any {
	var rows [][]any
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
	return rows
}

// signedOffBy heads the row of the sign-off sheet a client may type a
// name into: free text, which nothing checks or records (the row of
// signedOffWithKey, from the set's verified sign-off, says who signed);
// signatureRow heads the row of the signature, which the set gives only
// after its plans.
const (
	signedOffBy      = "Signed off by (typed: not verified)"
	signedOffWithKey = "Signed off with key by"
	signatureRow     = "Signature"
)

// changeSetBook is a sign-off workbook opened with the flat reader.
type changeSetBook struct {
	b              *xlsx.Book
	data, readable xlsx.Sheet
}

// maxChangeSetUnpacked bounds what a sign-off workbook's parts unpack to:
// its readable sheet's XML beside the signed set, for a set of up to
// maxChangeSetBytes, as a workbook's (the parts are streamed, not held).
const maxChangeSetUnpacked = xlsx.DefaultMaxUncompressed

// openChangeSetBook opens the workbook in r with the flat reader, within
// maxChangeSetUnpacked, reading only its list of parts, its workbook part
// and its styles; a workbook without the change set's data sheet (or one
// the reader refuses) is ErrNotChangeSet, left to the bounded workbook
// reader.
func openChangeSetBook(r io.ReaderAt, size int64) (*changeSetBook, error) {
	b, err := xlsx.Open(r, size, xlsx.Limits{MaxUncompressed: maxChangeSetUnpacked})
	if err != nil {
		return nil, ErrNotChangeSet
	}
	cb := &changeSetBook{b: b}
	for _, sh := range b.Sheets {
		switch sh.Name {
		case ChangeSetData:
			cb.data = sh
		case ChangeSetSheet:
			cb.readable = sh
		}
	}
	if cb.data.Path == "" {
		return nil, ErrNotChangeSet
	}
	return cb, nil
}

// IsChangeSet reports whether path names a saved change set rather than a
// workbook of plans: a .json file, or a regular .xlsx file whose workbook
// holds the change set's data sheet (its sheets are not read).
func IsChangeSet(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return true
	case ".xlsx":
		fh, err := os.Open(path)
		if err != nil {
			return false
		}
		defer fh.Close()
		st, err := fh.Stat()
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxChangeSetBytes {
			return false
		}
		_, err = openChangeSetBook(fh, st.Size())
		return err == nil
	}
	return false
}

// scan reads the signed change set from the data sheet (the text of its
// column A, row after row), handing each plan to fn; with sheet, the
// readable sheet is read beside it and checked plan by plan.
func (cb *changeSetBook) scan(sheet bool, fn func(*savedset.SavedChangeSet, int, *savedset.SavedPlan, [sha256.Size]byte) error) (*savedset.SavedChangeSet, error) {
	// The shared strings (of a workbook saved again by a spreadsheet
	// program) are loaded before the two sheets are read side by side.
	cb.b.SharedStrings()
	var chk *signOffCheck
	if sheet {
		if cb.readable.Path == "" {
			return nil, fmt.Errorf("the sign-off sheet %q is missing: the workbook was edited after `eepipe diff -o` wrote it; nothing was sent. "+
				"Write a new change set with eepipe diff -o", ChangeSetSheet)
		}
		chk = &signOffCheck{rows: cb.sheetRows(cb.readable)}
		defer chk.rows.close()
		inner := fn
		fn = func(h *savedset.SavedChangeSet, i int, p *savedset.SavedPlan, d [sha256.Size]byte) error {
			if err := chk.plan(h, p); err != nil {
				return err
			}
			return inner(h, i, p, d)
		}
	}
	text := cb.columnA(cb.data)
	defer text.Close()
	s, err := savedset.ScanSaved(text, fn)
	if err != nil {
		return nil, err
	}
	if chk != nil {
		if err := chk.finish(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// columnA returns a reader of the text of the sheet's A cells, in order,
// read as it is consumed; closing it stops the scan.
func (cb *changeSetBook) columnA(info xlsx.Sheet) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		var werr error
		err := cb.b.ScanSheet(info, func(_ int, cells []xlsx.RawCell) bool {
			for i := range cells {
				if cells[i].Col != 1 {
					continue
				}
				var t string
				if t, werr = cb.b.RawText(&cells[i]); werr == nil {
					_, werr = io.WriteString(pw, t)
				}
				return werr == nil
			}
			return true
		})
		if werr != nil {
			err = werr
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// signOffRow is a non-empty row of the readable sheet: its number and the
// trimmed text of its table's columns.
type signOffRow struct {
	n     int
	cells [signOffCols]string
}

// signOffRows streams a sheet's non-empty rows from a goroutine, a few
// ahead of the check.
type signOffRows struct {
	ch   chan signOffRow
	stop chan struct{}
	err  error // the scan's, once ch is closed
	next signOffRow
	have bool
}

func (cb *changeSetBook) sheetRows(info xlsx.Sheet) *signOffRows {
	r := &signOffRows{ch: make(chan signOffRow, 16), stop: make(chan struct{})}
	go func() {
		defer close(r.ch)
		var terr error
		err := cb.b.ScanSheet(info, func(n int, cells []xlsx.RawCell) bool {
			row := signOffRow{n: n}
			empty := true
			for i := range cells {
				if c := cells[i].Col; c >= 1 && c <= signOffCols {
					var t string
					if t, terr = cb.b.RawText(&cells[i]); terr != nil {
						return false
					}
					row.cells[c-1] = strings.TrimSpace(t)
					empty = empty && row.cells[c-1] == ""
				}
			}
			if empty {
				return true
			}
			select {
			case r.ch <- row:
				return true
			case <-r.stop:
				return false
			}
		})
		if terr != nil {
			err = terr
		}
		r.err = err
	}()
	return r
}

// row returns the cells of row n; rows are asked for in order.
func (r *signOffRows) row(n int) ([signOffCols]string, error) {
	if !r.have {
		next, ok := <-r.ch
		if !ok {
			if r.err != nil {
				return [signOffCols]string{}, fmt.Errorf("the sign-off sheet %q cannot be read: %w", ChangeSetSheet, r.err)
			}
			return [signOffCols]string{}, nil
		}
		if next.n < n {
			return [signOffCols]string{}, fmt.Errorf("the sign-off sheet %q is damaged: its row %d comes after row %d", ChangeSetSheet, next.n, n-1)
		}
		r.next, r.have = next, true
	}
	if r.next.n == n {
		r.have = false
		return r.next.cells, nil
	}
	return [signOffCols]string{}, nil
}

func (r *signOffRows) close() {
	close(r.stop)
	for range r.ch { // let the scan end
	}
}

// signOffCheck checks that the readable sheet of a sign-off workbook still
// shows exactly the signed change set, plan by plan as it is read: apply
// writes the hidden signed set, so a value typed over on the readable
// sheet, or a row deleted or added there, would otherwise be silently
// ignored. Only the "Signed off by" row (and what is typed right of the
// table) may be filled in. The signature row is compared once the set,
// which gives it after its plans, is read.
type signOffCheck struct {
	rows  *signOffRows
	n     int // the last row compared
	head  bool
	sigAt int
	sig   [signOffCols]string
}

func signOffEdited(col, row int, have, want string) error {
	cell, _ := excelize.CoordinatesToCellName(col, row)
	return fmt.Errorf("the sign-off sheet %q was edited at %s: it reads %q, the signed change set says %q; "+
		"apply writes the signed values, so nothing was sent. Write a new change set with eepipe diff -o (and have it signed off again)",
		ChangeSetSheet, cell, have, want)
}

// expect compares the next row with want.
func (k *signOffCheck) expect(want []any) error {
	k.n++
	have, err := k.rows.row(k.n)
	if err != nil {
		return err
	}
	return signOffCompare(k.n, have, want)
}

func signOffCompare(n int, have [signOffCols]string, want []any) error {
	for c := range signOffCols {
		w := ""
		if c < len(want) {
			w = strings.TrimSpace(fmt.Sprint(want[c]))
		}
		if have[c] != w {
			return signOffEdited(c+1, n, have[c], w)
		}
	}
	return nil
}

// checkHead compares the rows above the changes, keeping the signature's.
func (k *signOffCheck) checkHead(h *savedset.SavedChangeSet) error {
	k.head = true
	for _, want := range changeSetHeadRows(h) {
		switch {
		case len(want) > 0 && want[0] == signedOffBy:
			k.n++
			if _, err := k.rows.row(k.n); err != nil {
				return err
			}
		case len(want) > 0 && want[0] == signatureRow:
			k.n++
			k.sigAt = k.n
			var err error
			if k.sig, err = k.rows.row(k.n); err != nil {
				return err
			}
		default:
			if err := k.expect(want); err != nil {
				return err
			}
		}
	}
	return nil
}

// plan compares the rows of one plan.
func (k *signOffCheck) plan(h *savedset.SavedChangeSet, p *savedset.SavedPlan) error {
	if !k.head {
		if err := k.checkHead(h); err != nil {
			return err
		}
	}
	for _, want := range changeSetPlanRows(p) {
		if err := k.expect(want); err != nil {
			return err
		}
	}
	return nil
}

// finish compares the signature row and refuses a row added below the
// table.
func (k *signOffCheck) finish(s *savedset.SavedChangeSet) error {
	if !k.head {
		if err := k.checkHead(s); err != nil {
			return err
		}
	}
	if err := signOffCompare(k.sigAt, k.sig, []any{signatureRow, s.Signature}); err != nil {
		return err
	}
	k.n++
	if !k.rows.have {
		next, ok := <-k.rows.ch
		if !ok {
			if k.rows.err != nil {
				return fmt.Errorf("the sign-off sheet %q cannot be read: %w", ChangeSetSheet, k.rows.err)
			}
			return nil
		}
		k.rows.next, k.rows.have = next, true
	}
	return signOffCompare(k.rows.next.n, k.rows.next.cells, nil)
}
