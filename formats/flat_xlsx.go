package formats

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/xuri/excelize/v2"
)

// The flat table in an XLSX workbook is read as a stream: the worksheet's
// XML is tokenized straight out of the zip archive (flatXMLScanner), one
// row at a time, so memory stays flat however many rows the sheet has.
// excelize's row iterator (File.Rows) streams too, but gives only the
// cells' text, and validation needs each cell's type (a date cell, a
// number, an error value, a formula without a cached value) and its number
// format (dates, zero padding); so the reader decodes the same XML itself
// and uses the workbook's styles, shared strings and date system. Grid
// workbooks, small by nature, are read with excelize (grid_read.go).

// flatBook is an opened XLSX package with what the flat reader needs.
type flatBook struct {
	zr        *zip.Reader
	files     map[string]*zip.File
	sheets    []flatSheetInfo
	date1904  bool
	xfs       []flatXF // cellXfs by index
	sstPath   string
	sst       []string
	sstErr    error
	sstDone   bool
	scanErr   error             // the first error that stops every read (noteScanError)
	scanErrAt pipeline.Origin   // where
	texts     map[string]string // inline strings read, which repeat from row to row
	// recalcOnLoad is set when the workbook asks to be recalculated when
	// opened (<calcPr fullCalcOnLoad="1"/>, as XlsxWriter and other
	// writers that never calculate set it): its saved formula results are
	// placeholders (XlsxWriter saves 0), so every formula cell reads as
	// having no saved result.
	recalcOnLoad bool
}

type flatSheetInfo struct {
	name   string
	path   string // part name in the zip, "" when missing
	hidden bool
}

// flatXF is what the reader needs of a cell format.
type flatXF struct {
	date  bool // a date format: numbers are dates
	padTo int  // a format of only zeros ("0000000000"): integers are zero-padded to this width
}

// Reasons a workbook cannot be read, in plain words.
var (
	errFlatEncrypted = errors.New("the file is password-protected (encrypted) or an old-style .xls workbook; eepipe reads .xlsx workbooks: remove the password, or open it in Excel or LibreOffice and save it as .xlsx")
	errFlatNotZip    = errors.New("the file is not an XLSX workbook (an XLSX file is a zip archive, and this one is not); save it as .xlsx from Excel or LibreOffice")
	errFlatDamaged   = errors.New("the workbook is damaged or truncated (its zip archive cannot be read); save it again from Excel or LibreOffice, or copy it again")
	errFlatNoWB      = errors.New("the zip archive is not an XLSX workbook (it has no workbook part)")
)

var flatOLEMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// openFlatBook opens an XLSX package for streaming reads, within the
// limits: the archive's list of parts, the total size its parts unpack to
// (archive/zip holds each part to the size it declares) and each part's
// compression ratio are checked before anything is unpacked.
func openFlatBook(r io.ReaderAt, size int64, lim Limits) (*flatBook, error) {
	head := make([]byte, 8)
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	switch {
	case n == 0:
		return nil, errors.New("the file is empty")
	case bytes.HasPrefix(head, flatOLEMagic):
		return nil, errFlatEncrypted
	case !bytes.HasPrefix(head, []byte("PK")):
		if flatLooksLikeText(head) {
			return nil, errors.New("the file is not an XLSX workbook: it holds text (a CSV file with an .xlsx name?); give CSV files a .csv name")
		}
		return nil, errFlatNotZip
	}
	if err := flatCheckCentralDir(r, size); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, errFlatDamaged
	}
	b := &flatBook{zr: zr, files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		b.files[strings.TrimPrefix(strings.ReplaceAll(f.Name, "\\", "/"), "/")] = f
	}
	total, ok := b.plausibleSize()
	if !ok {
		return nil, errFlatDamaged
	}
	if max := lim.maxUncompressed(); total > max {
		return nil, limitErrorf("the file is oversized or damaged: the workbook unpacks to %s, more than the limit of %s (--max-uncompressed)", sizeText(total), sizeText(max))
	}
	if err := b.readWorkbook(); err != nil {
		return nil, err
	}
	if err := b.readStyles(); err != nil {
		return nil, err
	}
	return b, nil
}

func flatLooksLikeText(b []byte) bool {
	for _, c := range b {
		if c < 0x09 || (c > 0x0d && c < 0x20) {
			return false
		}
	}
	return true
}

// flatMaxRatio is more than deflate's best compression ratio (about 1032:1).
const flatMaxRatio = 1100

// plausibleSize checks the sizes the archive declares against what its
// compressed data can hold, and returns the total declared size.
func (b *flatBook) plausibleSize() (int64, bool) {
	var total uint64
	for _, f := range b.zr.File {
		if f.UncompressedSize64 > f.CompressedSize64*flatMaxRatio+(1<<16) {
			return 0, false
		}
		total += f.UncompressedSize64
	}
	if total > 1<<40 {
		return 0, false
	}
	return int64(total), true
}

// flatCheckCentralDir checks the size of the zip archive's central
// directory (its list of parts), which zip.NewReader reads whole, from the
// end-of-directory record, before the archive is opened.
func flatCheckCentralDir(r io.ReaderAt, size int64) error {
	const eocdLen, maxComment = 22, 1 << 16
	tailLen := min(size, eocdLen+maxComment)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return errFlatDamaged
	}
	i := bytes.LastIndex(tail, []byte("PK\x05\x06"))
	if i < 0 || len(tail)-i < eocdLen {
		return nil // zip.NewReader says the archive is damaged
	}
	cdSize := uint64(binary.LittleEndian.Uint32(tail[i+12:]))
	if cdSize == 0xFFFFFFFF && i >= 20 && bytes.HasPrefix(tail[i-20:], []byte("PK\x06\x07")) {
		// Zip64: the size is in the zip64 end-of-directory record.
		off := int64(binary.LittleEndian.Uint64(tail[i-20+8:]))
		rec := make([]byte, 56)
		if off < 0 || off > size-56 {
			return errFlatDamaged
		}
		if _, err := r.ReadAt(rec, off); err != nil || !bytes.HasPrefix(rec, []byte("PK\x06\x06")) {
			return errFlatDamaged
		}
		cdSize = binary.LittleEndian.Uint64(rec[40:])
	}
	if cdSize > flatMaxCentralDir {
		return limitErrorf("the file is oversized or damaged: its zip archive's list of parts takes %s, more than the %s an XLSX workbook needs", sizeText(int64(min(cdSize, 1<<62))), sizeText(flatMaxCentralDir))
	}
	return nil
}

// openMeta returns a reader of a part decoded whole (workbook,
// relationships, styles), which must be at most flatMaxMetaPart.
func (b *flatBook) openMeta(name string) (io.ReadCloser, error) {
	if f, ok := b.files[name]; ok && f.UncompressedSize64 > flatMaxMetaPart {
		return nil, limitErrorf("the file is oversized or damaged: its part %s unpacks to %s, more than the %s such a part needs", flatQuotePrefix([]byte(name)), sizeText(int64(min(f.UncompressedSize64, 1<<62))), sizeText(flatMaxMetaPart))
	}
	return b.open(name)
}

// open returns a reader of a part; damaged entries give errFlatDamaged.
func (b *flatBook) open(name string) (io.ReadCloser, error) {
	f, ok := b.files[name]
	if !ok {
		return nil, fmt.Errorf("part %s is missing", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, errFlatDamaged
	}
	return rc, nil
}

type flatRel struct {
	ID     string `xml:"Id,attr"`
	Type   string `xml:"Type,attr"`
	Target string `xml:"Target,attr"`
}

func (b *flatBook) rels(part string) ([]flatRel, error) {
	name := path.Join(path.Dir(part), "_rels", path.Base(part)+".rels")
	rc, err := b.openMeta(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var doc struct {
		Rels []flatRel `xml:"Relationship"`
	}
	if err := xml.NewDecoder(rc).Decode(&doc); err != nil {
		return nil, errFlatDamaged
	}
	return doc.Rels, nil
}

func flatRelTarget(base, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(target, "/")
	}
	return path.Clean(path.Join(path.Dir(base), target))
}

func (b *flatBook) readWorkbook() error {
	wbPath := "xl/workbook.xml"
	if rels, err := b.rels(""); err == nil {
		for _, r := range rels {
			if strings.HasSuffix(r.Type, "/officeDocument") {
				wbPath = flatRelTarget("", r.Target)
			}
		}
	}
	if _, ok := b.files[wbPath]; !ok {
		return errFlatNoWB
	}
	rc, err := b.openMeta(wbPath)
	if err != nil {
		return err
	}
	defer rc.Close()
	var wb struct {
		Pr *struct {
			Date1904 string `xml:"date1904,attr"`
		} `xml:"workbookPr"`
		Calc *struct {
			FullCalcOnLoad string `xml:"fullCalcOnLoad,attr"`
		} `xml:"calcPr"`
		Sheets []struct {
			Name  string     `xml:"name,attr"`
			State string     `xml:"state,attr"`
			Attrs []xml.Attr `xml:",any,attr"`
		} `xml:"sheets>sheet"`
	}
	if err := xml.NewDecoder(rc).Decode(&wb); err != nil {
		return errFlatDamaged
	}
	if wb.Pr != nil {
		v := strings.ToLower(wb.Pr.Date1904)
		b.date1904 = v == "1" || v == "true"
	}
	if wb.Calc != nil {
		v := strings.ToLower(wb.Calc.FullCalcOnLoad)
		b.recalcOnLoad = v == "1" || v == "true"
	}
	rels, _ := b.rels(wbPath)
	byID := map[string]flatRel{}
	for _, r := range rels {
		byID[r.ID] = r
		switch {
		case strings.HasSuffix(r.Type, "/sharedStrings"):
			b.sstPath = flatRelTarget(wbPath, r.Target)
		}
	}
	for _, s := range wb.Sheets {
		info := flatSheetInfo{name: s.Name, hidden: s.State == "hidden" || s.State == "veryHidden"}
		for _, a := range s.Attrs {
			if a.Name.Local == "id" {
				if r, ok := byID[a.Value]; ok && strings.HasSuffix(r.Type, "/worksheet") {
					info.path = flatRelTarget(wbPath, r.Target)
				}
			}
		}
		b.sheets = append(b.sheets, info)
	}
	return nil
}

// readStyles reads the cell formats; a missing or damaged styles part only
// means every number is a plain number, but one beyond flatMaxMetaPart is
// an oversized file.
func (b *flatBook) readStyles() error {
	var stylesPath string
	for name := range b.files {
		if strings.HasSuffix(name, "styles.xml") && strings.HasPrefix(name, "xl/") {
			stylesPath = name
		}
	}
	if stylesPath == "" {
		return nil
	}
	rc, err := b.openMeta(stylesPath)
	if err != nil {
		if errors.Is(err, errOversized) {
			return err
		}
		return nil
	}
	defer rc.Close()
	var ss struct {
		NumFmts []struct {
			ID   int    `xml:"numFmtId,attr"`
			Code string `xml:"formatCode,attr"`
		} `xml:"numFmts>numFmt"`
		Xfs []struct {
			NumFmtID int `xml:"numFmtId,attr"`
		} `xml:"cellXfs>xf"`
	}
	if err := xml.NewDecoder(rc).Decode(&ss); err != nil {
		return nil
	}
	codes := map[int]string{}
	for _, nf := range ss.NumFmts {
		codes[nf.ID] = nf.Code
	}
	b.xfs = make([]flatXF, len(ss.Xfs))
	for i, xf := range ss.Xfs {
		code := codes[xf.NumFmtID]
		b.xfs[i] = flatXF{date: isDateFormat(xf.NumFmtID, code), padTo: flatZeroPadWidth(code)}
	}
	return nil
}

// flatZeroPadWidth returns the width of a number format made only of zeros
// ("0000000000" pads a VAT number typed as a number), or 0.
func flatZeroPadWidth(code string) int {
	code, _, _ = strings.Cut(code, ";")
	code = strings.Trim(code, `"`)
	if len(code) < 2 || strings.Trim(code, "0") != "" {
		return 0
	}
	return len(code)
}

// sharedStrings loads the shared string table once, within bounds: at
// most flatMaxSSTStrings entries and flatMaxSSTBytes of text, each entry
// at most MaxCellChars characters, each XML token at most flatMaxToken.
// The error says what is wrong with the table.
func (b *flatBook) sharedStrings() ([]string, error) {
	if b.sstDone {
		return b.sst, b.sstErr
	}
	b.sstDone = true
	if b.sstPath == "" {
		if _, ok := b.files["xl/sharedStrings.xml"]; !ok {
			return nil, nil
		}
		b.sstPath = "xl/sharedStrings.xml"
	}
	rc, err := b.open(b.sstPath)
	if err != nil {
		b.sstErr = fmt.Errorf("the shared string table (%s) cannot be read: %w", b.sstPath, err)
		return nil, b.sstErr
	}
	defer rc.Close()
	b.sst, b.sstErr = flatReadSST(rc)
	if b.sstErr != nil {
		b.sstErr = fmt.Errorf("the shared string table (%s) cannot be read: %w", b.sstPath, b.sstErr)
	}
	return b.sst, b.sstErr
}

// flatReadSST reads a shared string table part. On an error it returns the
// entries read before it.
func flatReadSST(r io.Reader) ([]string, error) {
	sc := newFlatXMLScanner(r)
	var (
		sst       []string
		total     int
		cur       []byte
		inT, inSI bool
		skip      int // depth inside rPh (phonetic runs), not part of the text
	)
	for {
		err := sc.next()
		if err == io.EOF {
			if inSI {
				return sst, fmt.Errorf("entry %d is not closed: the part is truncated or damaged", len(sst))
			}
			return sst, nil
		}
		if err != nil {
			if errors.Is(err, errOversized) {
				return sst, fmt.Errorf("at entry %d: %w", len(sst), err)
			}
			return sst, fmt.Errorf("at entry %d: the XML is malformed (the workbook is damaged)", len(sst))
		}
		switch sc.kind {
		case flatTokStart:
			switch flatName(sc.name) {
			case "si":
				inSI, cur, skip = true, cur[:0], 0
			case "rPh":
				if !sc.self {
					skip++
				}
			case "t":
				inT = inSI && skip == 0 && !sc.self
			}
			if sc.self && flatName(sc.name) == "si" {
				inSI = false
				if len(sst) >= flatMaxSSTStrings {
					return sst, limitErrorf("the file is oversized or damaged: the table has more than %d entries", flatMaxSSTStrings)
				}
				sst = append(sst, "")
			}
		case flatTokEnd:
			switch flatName(sc.name) {
			case "si":
				if !inSI {
					continue
				}
				inSI = false
				if len(sst) >= flatMaxSSTStrings {
					return sst, limitErrorf("the file is oversized or damaged: the table has more than %d entries", flatMaxSSTStrings)
				}
				if flatTooManyChars(cur) {
					return sst, fmt.Errorf("entry %d: %w", len(sst), flatCellTooLong())
				}
				total += len(cur)
				if total > flatMaxSSTBytes {
					return sst, limitErrorf("the file is oversized or damaged: the table holds more than %s of text", sizeText(flatMaxSSTBytes))
				}
				sst = append(sst, flatDecodeEscapes(string(cur)))
			case "rPh":
				if skip > 0 {
					skip--
				}
			case "t":
				inT = false
			}
		case flatTokText:
			if inT {
				cur = append(cur, sc.text...)
				if len(cur) > flatMaxCellBytes {
					return sst, fmt.Errorf("entry %d: %w", len(sst), flatCellTooLong())
				}
			}
		}
	}
}

// flatDecodeEscapes turns _xHHHH_ escapes of OOXML strings into characters.
func flatDecodeEscapes(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && i+6 < len(s) && s[i+1] == 'x' && s[i+6] == '_' {
			if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				out.WriteRune(rune(v))
				i += 6
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// flatRawCell is one <c> element as found in the sheet XML. value and
// inline are the text of its <v> and of its <t> elements (an inline
// string's runs, joined); they are valid until the next row is read.
type flatRawCell struct {
	col     int
	style   int
	typ     string
	value   []byte
	inline  []byte
	formula bool
	hasV    bool

	// value and inline as spans of the batch's text while the rows are
	// scanned (the text may move as it grows).
	vStart, vEnd int
	iStart, iEnd int
	hasInline    bool
}

// flatStaleCell stands for a cell left open in an earlier row, which the
// scan may still write to (as a stray </v> would) though no row reads it.
const flatStaleCell = -2

// flatRowFunc receives each non-empty row: its number and its cells (the
// slice is reused between calls). Returning false stops the scan.
type flatRowFunc func(row int, cells []flatRawCell) bool

// flatRowBatch is a run of rows of a sheet, scanned and not yet read: the
// cells of all its rows, and the text their spans point into.
type flatRowBatch struct {
	rows  []flatRowSpan
	cells []flatRawCell
	text  []byte
	last  bool  // the scan ended after these rows
	err   error // why, when it failed
	panic any   // the scanner panicked, with this value
	// merges are the ref attributes of the <mergeCell> elements after
	// the rows (spans of text), in the last batch of a scan that asked
	// for them; mergesCut says there were more than flatMaxMergeRefs.
	merges    [][2]int
	mergesCut bool
}

// flatMaxMergeRefs bounds the merged ranges a scan gathers after a
// sheet's rows (flatReadRowsMerged); a reference is a few bytes.
const flatMaxMergeRefs = 1 << 17

type flatRowSpan struct {
	row      int
	from, to int // the row's cells in cells
}

// Limits of a batch: rows, or text and cells for sheets with long rows.
const (
	flatBatchRows  = 32
	flatBatchText  = 256 << 10
	flatBatchCells = 16 << 10
)

// scanSheet streams a worksheet's rows to fn. The XML is decompressed and
// scanned on a goroutine of its own, a few batches of rows ahead of fn, so
// that reading a large sheet uses a second core; fn sees the rows in order,
// as if it were one loop.
func (b *flatBook) scanSheet(info flatSheetInfo, fn flatRowFunc) error {
	if info.path == "" {
		return fmt.Errorf("sheet %s has no worksheet data", info.name)
	}
	rc, err := b.open(info.path)
	if err != nil {
		return err
	}
	defer rc.Close()
	return flatReadRows(rc, fn, nil)
}

// scanSheetMerged is scanSheet that also gathers the ref attributes of
// the sheet's <mergeCell> elements, which follow its rows, in the same
// pass: merged gets each (for that call only) once every row has been
// seen, unless fn stopped the scan; complete is false when there were more
// than flatMaxMergeRefs of them, or the scan stopped before them.
func (b *flatBook) scanSheetMerged(info flatSheetInfo, fn flatRowFunc, merged func(ref []byte)) (complete bool, err error) {
	if info.path == "" {
		return false, fmt.Errorf("sheet %s has no worksheet data", info.name)
	}
	rc, err := b.open(info.path)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	complete = true
	err = flatReadRows(rc, fn, func(refs [][]byte, cut bool) {
		for _, ref := range refs {
			merged(ref)
		}
		complete = !cut
	})
	return complete, err
}

// flatReadRows scans the sheet XML of r on a goroutine (flatScanRows) and
// passes its rows to fn, in order; it returns once the goroutine is done.
// With merges set, the scan goes on after the rows for the <mergeCell>
// elements, and merges gets their ref attributes once every row has been
// passed (not when fn stopped the scan).
func flatReadRows(r io.Reader, fn flatRowFunc, merges func(refs [][]byte, cut bool)) error {
	const batches = 3
	full := make(chan *flatRowBatch, batches)
	free := make(chan *flatRowBatch, batches)
	var mine [batches]*flatRowBatch
	for i := range mine {
		mine[i] = flatGetBatch()
		free <- mine[i]
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		flatScanRows(r, full, free, stop, merges != nil)
	}()
	defer func() {
		close(stop)
		<-done // before r is closed
		for _, b := range mine {
			flatPutBatch(b)
		}
	}()
	for {
		batch := <-full
		for _, r := range batch.rows {
			cells := batch.cells[r.from:r.to]
			for i := range cells {
				c := &cells[i]
				c.value, c.inline = batch.text[c.vStart:c.vEnd:c.vEnd], batch.text[c.iStart:c.iEnd:c.iEnd]
			}
			if !fn(r.row, cells) {
				return nil
			}
		}
		if batch.last {
			if batch.panic != nil {
				panic(batch.panic)
			}
			if merges != nil && batch.err == nil {
				refs := make([][]byte, len(batch.merges))
				for i, m := range batch.merges {
					refs[i] = batch.text[m[0]:m[1]:m[1]]
				}
				merges(refs, batch.mergesCut)
			}
			return batch.err
		}
		batch.rows, batch.cells, batch.text = batch.rows[:0], batch.cells[:0], batch.text[:0]
		free <- batch
	}
}

// flatBatchPool holds row batches between scans (flatGetBatch,
// flatPutBatch): a workbook of thousands of small sheets would otherwise
// grow three new batches for every scan of every sheet.
var flatBatchPool sync.Pool

func flatGetBatch() *flatRowBatch {
	if b, ok := flatBatchPool.Get().(*flatRowBatch); ok {
		return b
	}
	return &flatRowBatch{}
}

// flatPutBatch empties b, once no scan uses it, into the pool, unless a
// row of thousands of cells grew it past a batch's usual size.
func flatPutBatch(b *flatRowBatch) {
	if cap(b.cells) > 2*flatBatchCells || cap(b.text) > 2*flatBatchText || cap(b.rows) > 4*flatBatchRows || cap(b.merges) > 1<<12 {
		return
	}
	clear(b.cells[:cap(b.cells)]) // (no text of a scan kept alive by the pool)
	*b = flatRowBatch{rows: b.rows[:0], cells: b.cells[:0], text: b.text[:0], merges: b.merges[:0]}
	flatBatchPool.Put(b)
}

// flatScanRows scans the sheet XML of r into batches of rows: it takes
// empty batches from free and sends them filled to full, the last one
// marked, until stop is closed. With merges, it goes on after the rows
// and puts the ref attributes of the <mergeCell> elements in the last
// batch (damage after the rows ends the scan as its end would).
func flatScanRows(r io.Reader, full chan<- *flatRowBatch, free <-chan *flatRowBatch, stop <-chan struct{}, merges bool) {
	var batch *flatRowBatch
	get := func() bool {
		select {
		case batch = <-free:
			return true
		case <-stop:
			return false
		}
	}
	send := func() bool {
		select {
		case full <- batch:
			return true
		case <-stop:
			return false
		}
	}
	finish := func(err error) {
		batch.last, batch.err = true, err
		send()
	}
	if !get() {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			batch.last, batch.panic = true, v
			send()
		}
	}()
	sc := newFlatXMLScanner(r)
	defer sc.release()
	var (
		row        int
		rowFrom    int  // the current row's cells are batch.cells[rowFrom:rowTo]
		rowTo      int  // (set when the row ends)
		sealed     bool // the row has ended and been passed on as it was then
		inRow      bool
		cur        = -1 // the cell being read, in batch.cells; -1 for none, flatStaleCell
		stale      flatRawCell
		field      string // "v", "f", "t" (inline string) while inside one
		fieldStart int    // where the field's text starts in batch.text
		pending    []byte // an open field's text, moving to the next batch
		lastCol    int
		afterRows  bool // past </sheetData>, gathering merged ranges
	)
	// fail ends the scan with an error at a cell of the current row (col
	// 0: the row).
	fail := func(col int, err error) {
		finish(&flatScanError{row: row, col: col, err: err})
	}
	// cell returns the cell being read, for a change. The cells of a row
	// that has ended are passed on as they were then: a change after that
	// (a stray element after </row>, a second </row>) goes to a copy, as
	// it would go to the row's cells after they were read.
	cell := func() *flatRawCell {
		if cur == flatStaleCell {
			return &stale
		}
		if sealed {
			n := rowTo - rowFrom
			batch.cells = append(batch.cells, batch.cells[rowFrom:rowTo]...)
			cur += len(batch.cells) - n - rowFrom
			rowFrom, rowTo, sealed = len(batch.cells)-n, len(batch.cells), false
		}
		return &batch.cells[cur]
	}
	// end handles the end of an element; stop is true when the scan ends.
	end := func(name string) (stop bool) {
		switch name {
		case "v":
			if cur != -1 && field == "v" {
				c := cell()
				c.vStart, c.vEnd, c.hasV = fieldStart, len(batch.text), true
				if flatTooManyChars(batch.text[c.vStart:c.vEnd]) {
					fail(lastCol, flatCellTooLong())
					return true
				}
			}
			field = ""
		case "f":
			if cur != -1 {
				cell().formula = true
			}
			field = ""
		case "t":
			if cur != -1 && field == "t" {
				c := cell()
				if !c.hasInline {
					c.iStart, c.hasInline = fieldStart, true
				}
				c.iEnd = len(batch.text)
				if flatTooManyChars(batch.text[c.iStart:c.iEnd]) {
					fail(lastCol, flatCellTooLong())
					return true
				}
			}
			field = ""
		case "c":
			cur = -1
		case "row":
			inRow = false
			if !sealed {
				rowTo, sealed = len(batch.cells), true
			}
			if row > excelize.TotalRows {
				fail(0, limitErrorf("the file is oversized or damaged: the sheet has more than %d rows, the most a sheet has", excelize.TotalRows))
				return true
			}
			batch.rows = append(batch.rows, flatRowSpan{row: row, from: rowFrom, to: rowTo})
		case "sheetData":
			if merges && !inRow {
				afterRows, cur, field = true, -1, ""
				return false
			}
			finish(nil)
			return true
		}
		return false
	}
	for {
		err := sc.next()
		if err == io.EOF {
			finish(nil)
			return
		}
		if afterRows {
			switch {
			case err != nil:
				finish(nil) // what follows the rows is no data
				return
			case sc.kind != flatTokStart || flatName(sc.name) != "mergeCell":
			case len(sc.attr("ref")) > 32:
				// Longer than XFD1048576:XFD1048576, it names no range:
				// left out, as a reader skips it.
			case len(batch.merges) >= flatMaxMergeRefs:
				batch.mergesCut = true
				finish(nil)
				return
			default:
				ref := sc.attr("ref")
				batch.text = append(batch.text, ref...)
				batch.merges = append(batch.merges, [2]int{len(batch.text) - len(ref), len(batch.text)})
			}
			continue
		}
		if err != nil {
			if !errors.Is(err, errOversized) {
				err = errFlatDamaged
			}
			if inRow {
				fail(0, err)
			} else {
				finish(err)
			}
			return
		}
		switch sc.kind {
		case flatTokStart:
			name := flatName(sc.name)
			switch name {
			case "row":
				if len(batch.rows) >= flatBatchRows || len(batch.text) >= flatBatchText || len(batch.cells) >= flatBatchCells {
					// A field left open goes on in the next batch (its
					// text would become the value of a <v> that ends in
					// this row).
					if field != "" {
						pending = append(pending[:0], batch.text[fieldStart:]...)
					}
					if !send() || !get() {
						return
					}
					if field != "" {
						batch.text, fieldStart = append(batch.text, pending...), 0
					}
				}
				// A cell left open in the last row is no part of this one:
				// what a stray element writes to it is never read.
				if cur >= 0 {
					cur = flatStaleCell
				}
				inRow, sealed = true, false
				rowFrom, rowTo = len(batch.cells), len(batch.cells)
				lastCol = 0
				prev := row
				row++
				if r := sc.attr("r"); r != nil {
					v, ok := flatAtoi(r)
					if !ok || v < 1 || v > excelize.TotalRows {
						fail(0, fmt.Errorf("the row number %q is not a row of a sheet (1 to %d); the sheet is damaged", flatQuotePrefix(r), excelize.TotalRows))
						return
					}
					if v <= prev {
						row = v
						fail(0, fmt.Errorf("row %d comes again after row %d (rows must be in order, each once); the sheet is damaged", v, prev))
						return
					}
					row = v
				}
			case "c":
				if !inRow {
					break
				}
				if len(batch.cells)-rowFrom >= MaxRowCells {
					fail(0, limitErrorf("the file is oversized or damaged: the row has more than %d cells (a row has columns A to XFD)", MaxRowCells))
					return
				}
				batch.cells = append(batch.cells, flatRawCell{})
				cur = len(batch.cells) - 1
				c := &batch.cells[cur]
				if ref := sc.attr("r"); ref != nil {
					col, refRow := flatCellRef(ref)
					switch {
					case col == 0:
						fail(lastCol+1, fmt.Errorf("the cell reference %q is not a cell of a sheet (A1 to XFD%d); the sheet is damaged", flatQuotePrefix(ref), excelize.TotalRows))
						return
					case refRow != row:
						fail(col, fmt.Errorf("the cell reference %q is inside row %d; the sheet is damaged", flatQuotePrefix(ref), row))
						return
					case col <= lastCol:
						fail(col, fmt.Errorf("the cell reference %q comes after column %s of the same row (a row's cells must be in column order, each once); the sheet is damaged", flatQuotePrefix(ref), flatColumnLetters(lastCol)))
						return
					}
					c.col = col
				}
				if v, ok := flatAtoi(sc.attr("s")); ok {
					c.style = v
				}
				c.typ = flatName(sc.attr("t"))
				if c.col == 0 {
					c.col = lastCol + 1
					if c.col > MaxRowCells {
						fail(0, limitErrorf("the file is oversized or damaged: the row has a cell past the last column XFD"))
						return
					}
				}
				lastCol = c.col
			case "v", "f", "t":
				if cur != -1 {
					field = name
					if name == "t" && cur >= 0 && batch.cells[cur].hasInline && batch.cells[cur].iEnd != len(batch.text) {
						// Another element's text came between this cell's
						// runs: move the runs so far to the end, where
						// this one continues them.
						c := cell()
						n := c.iEnd - c.iStart
						batch.text = append(batch.text, batch.text[c.iStart:c.iEnd]...)
						c.iStart, c.iEnd = len(batch.text)-n, len(batch.text)
					}
					fieldStart = len(batch.text)
				}
			}
			if sc.self && end(name) {
				return
			}
		case flatTokText:
			if field == "v" || field == "t" {
				batch.text = append(batch.text, sc.text...)
				if n := len(batch.text) - fieldStart; n > flatMaxCellBytes || (field == "t" && cur >= 0 && batch.cells[cur].hasInline && len(batch.text)-batch.cells[cur].iStart > flatMaxCellBytes) {
					fail(lastCol, flatCellTooLong())
					return
				}
			}
		case flatTokEnd:
			if end(flatName(sc.name)) {
				return
			}
		}
	}
}

// flatScanError is an error at a row (col 0) or cell of a sheet.
type flatScanError struct {
	row, col int
	err      error
}

func (e *flatScanError) Error() string { return e.err.Error() }
func (e *flatScanError) Unwrap() error { return e.err }

// origin places the error in a sheet.
func (e *flatScanError) origin(file, sheet string) pipeline.Origin {
	o := pipeline.Origin{File: file, Sheet: sheet, Row: e.row}
	if e.col > 0 && e.col <= MaxRowCells && e.row > 0 {
		o.Column = e.col
		o.Cell = flatColumnLetters(e.col) + strconv.Itoa(e.row)
	}
	return o
}

func flatCellTooLong() error {
	return limitErrorf("the file is oversized or damaged: the cell holds more than %d characters, the most a cell holds", MaxCellChars)
}

// flatTooManyChars reports whether text has more characters than a cell
// holds.
func flatTooManyChars(text []byte) bool {
	return len(text) > MaxCellChars && utf8.RuneCount(text) > MaxCellChars
}

// flatColumnLetters returns the letters of a column number (1 is A).
func flatColumnLetters(col int) string {
	s, err := excelize.ColumnNumberToName(col)
	if err != nil {
		return strconv.Itoa(col)
	}
	return s
}

// flatQuotePrefix returns at most the first bytes of a value found in a
// file, for a message.
func flatQuotePrefix(b []byte) string {
	return pipeline.Excerpt(string(b))
}

// flatName returns the names and cell types the reader knows as constants
// (no allocation per cell), others as a copy.
func flatName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "c":
		return "c"
	case "v":
		return "v"
	case "f":
		return "f"
	case "t":
		return "t"
	case "row":
		return "row"
	case "is":
		return "is"
	case "sheetData":
		return "sheetData"
	case "s":
		return "s"
	case "n":
		return "n"
	case "str":
		return "str"
	case "inlineStr":
		return "inlineStr"
	case "b":
		return "b"
	case "e":
		return "e"
	case "d":
		return "d"
	}
	return string(b)
}

// cell types a raw cell into a pipeline.Cell, the same way readCell does for
// random access: text as displayed, numbers, date cells converted with the
// workbook's date system, error values, formulas without a cached value.
func (b *flatBook) cell(rc *flatRawCell, o pipeline.Origin) pipeline.Cell {
	c := pipeline.Cell{Origin: o}
	var xf flatXF
	if rc.style >= 0 && rc.style < len(b.xfs) {
		xf = b.xfs[rc.style]
	}
	if rc.formula && b.recalcOnLoad {
		c.Kind = pipeline.CellFormulaNoValue
		c.Reason = flatStaleResult
		if rc.typ == "str" && rc.hasV {
			// The writer declared a text result (XlsxWriter's
			// write_formula with a text value): kept as the cell's text,
			// so that a check column beside a grid reads as notes, never
			// as a value.
			c.Text = flatDecodeEscapes(string(rc.value))
		}
		return c
	}
	switch rc.typ {
	case "s":
		if !rc.hasV {
			return c
		}
		sst, sstErr := b.sharedStrings()
		v := bytes.TrimSpace(rc.value)
		i, err := flatIndex(v)
		switch {
		case err != nil || i < 0:
			c.Kind, c.Text = pipeline.CellError, "#UNREADABLE!"
			c.Reason = fmt.Sprintf("the cell refers to shared string %q, which is not an entry number; the workbook is damaged", flatQuotePrefix(v))
			return c
		case i >= len(sst) && sstErr != nil:
			c.Kind, c.Text = pipeline.CellError, "#UNREADABLE!"
			c.Reason = fmt.Sprintf("the cell's text is shared string %d, and %v", i, sstErr)
			return c
		case i >= len(sst):
			c.Kind, c.Text = pipeline.CellError, "#UNREADABLE!"
			c.Reason = fmt.Sprintf("the cell's text is shared string %d, but the workbook's shared string table has only %d entries; the workbook is damaged", i, len(sst))
			return c
		}
		return flatTextCell(c, sst[i])
	case "inlineStr":
		return flatTextCell(c, flatDecodeEscapes(b.text(rc.inline)))
	case "str":
		if !rc.hasV && rc.formula {
			c.Kind = pipeline.CellFormulaNoValue
			return c
		}
		return flatTextCell(c, flatDecodeEscapes(string(rc.value)))
	case "b":
		c.Kind, c.Text = pipeline.CellBool, "FALSE"
		if string(bytes.TrimSpace(rc.value)) == "1" {
			c.Text = "TRUE"
		}
		return c
	case "e":
		c.Kind, c.Text = pipeline.CellError, string(bytes.TrimSpace(rc.value))
		if c.Text == "" {
			c.Text = "#ERROR!"
		}
		return c
	case "d":
		value := string(rc.value)
		if t, ok := parseISOCellDate(value); ok {
			c.Kind, c.Date, c.Text = pipeline.CellDate, pipeline.DateOf(t), pipeline.DateOf(t).String()
			c.Number = templates.ExcelSerial(t, b.date1904)
			return c
		}
		return flatTextCell(c, value)
	}
	v := bytes.TrimSpace(rc.value)
	if !rc.hasV || len(v) == 0 {
		if rc.formula {
			c.Kind = pipeline.CellFormulaNoValue
		}
		return c
	}
	n, text, plain := flatPlainNumber(v)
	if !plain {
		var err error
		n, err = strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return flatTextCell(c, string(rc.value))
		}
	}
	c.Number = n
	if xf.date {
		if t, err := excelize.ExcelDateToTime(n, b.date1904); err == nil && n >= 1 {
			c.Kind, c.Date = pipeline.CellDate, pipeline.DateOf(t)
			c.Text = c.Date.String()
			return c
		}
	}
	c.Kind = pipeline.CellNumber
	if plain {
		c.Text = text
	} else {
		c.Text = strconv.FormatFloat(n, 'f', -1, 64)
	}
	if xf.padTo > 0 && n >= 0 && n == math.Trunc(n) && len(c.Text) < xf.padTo {
		c.Text = strings.Repeat("0", xf.padTo-len(c.Text)) + c.Text
	}
	return c
}

// flatStaleResult is why a formula of a workbook that asks to be
// recalculated when opened has no saved result (docs/formats.md, the flat table: values).
const flatStaleResult = "the cell holds a formula that has no saved result: the workbook asks to be recalculated when it is opened (as files written by XlsxWriter and other programs that never calculate do), so the results saved in it are placeholders, not values; open the workbook in Excel or LibreOffice, let it calculate and save it, or type the value instead of the formula"

// flatMaxTexts and flatMaxTextLen bound the strings text keeps.
const (
	flatMaxTexts   = 4096
	flatMaxTextLen = 64
)

// text returns raw as a string, the same string for the same short text
// (names, dates, sectors and target types repeat on every row of a plan),
// so that reading them allocates once.
func (b *flatBook) text(raw []byte) string {
	if len(raw) > flatMaxTextLen {
		return string(raw)
	}
	if s, ok := b.texts[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if b.texts == nil {
		b.texts = map[string]string{}
	}
	if len(b.texts) < flatMaxTexts {
		b.texts[s] = s
	}
	return s
}

// flatSmallInts are the texts of the numbers 0 to 999, the usual counter
// values, so that reading them allocates nothing.
var flatSmallInts = func() (out [1000]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// flatPlainNumber parses the common number value of a sheet: digits
// without a leading zero (or a single 0), at most 15 of them, which is the
// number's text as strconv.FormatFloat(n, 'f', -1, 64) gives it. plain is
// false for every other spelling, left to strconv.ParseFloat.
func flatPlainNumber(v []byte) (n float64, text string, plain bool) {
	if len(v) == 0 || len(v) > 15 || (v[0] == '0' && len(v) > 1) {
		return 0, "", false
	}
	var i int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, "", false
		}
		i = i*10 + int64(c-'0')
	}
	if i < int64(len(flatSmallInts)) {
		return float64(i), flatSmallInts[i], true
	}
	return float64(i), string(v), true
}

// flatIndex parses a shared string index as strconv.Atoi does.
func flatIndex(v []byte) (int, error) {
	if n, ok := flatAtoi(v); ok {
		return n, nil
	}
	return strconv.Atoi(string(v))
}

func flatTextCell(c pipeline.Cell, s string) pipeline.Cell {
	if strings.TrimSpace(s) == "" {
		c.Kind = pipeline.CellBlank
		return c
	}
	c.Kind, c.Text = pipeline.CellText, s
	return c
}

// flatHeaderRow scans the first rows of a sheet for the flat header.
func (b *flatBook) flatHeaderRow(info flatSheetInfo) (int, bool) {
	found, headerRow := false, 0
	err := b.scanSheet(info, func(row int, cells []flatRawCell) bool {
		if row > flatHeaderRows {
			return false
		}
		for _, rc := range cells {
			if rc.typ != "s" && rc.typ != "inlineStr" && rc.typ != "str" {
				continue
			}
			c := b.cell(&rc, pipeline.Origin{})
			if strings.EqualFold(strings.TrimSpace(c.Text), pipeline.ColTargetType) {
				found, headerRow = true, row
				return false
			}
		}
		return true
	})
	b.noteScanError(info, err)
	return headerRow, found
}

// noteScanError keeps the first error of a scan that makes the workbook
// unreadable whatever its layout: a limit passed (an oversized or damaged
// part) or a malformed cell reference, which excelize would read as
// another cell. Other damage is left to the reader of the layout found.
func (b *flatBook) noteScanError(info flatSheetInfo, err error) {
	if b.scanErr != nil || err == nil || errors.Is(err, errFlatDamaged) {
		return
	}
	o := pipeline.Origin{Sheet: info.name}
	var se *flatScanError
	if errors.As(err, &se) {
		o = se.origin("", info.name)
		err = se.err
	}
	b.scanErr, b.scanErrAt = err, o
}

// findFlatSheet picks the sheet of the flat table: Targets when present and
// visible, else the first visible sheet with a header row. hidden lists the
// hidden sheets that would have had one, for the message when none is found.
func (b *flatBook) findFlatSheet() (sheet flatSheetInfo, headerRow int, hidden []string, ok bool) {
	for _, s := range b.sheets {
		if !s.hidden && strings.EqualFold(s.name, "Targets") {
			if r, found := b.flatHeaderRow(s); found {
				return s, r, nil, true
			}
		}
	}
	for _, s := range b.sheets {
		if s.hidden {
			if _, found := b.flatHeaderRow(s); found {
				hidden = append(hidden, s.name)
			}
			continue
		}
		if r, found := b.flatHeaderRow(s); found {
			return s, r, nil, true
		}
	}
	return flatSheetInfo{}, 0, hidden, false
}

// readFlatSheet streams the flat table of one sheet into emit, which must
// not keep the record's Cells map nor its Counters slice: they are reused
// for the next row.
func (b *flatBook) readFlatSheet(file string, info flatSheetInfo, headerRow int, cat *pipeline.Catalog, emit func(pipeline.Record), ps *pipeline.Problems) {
	var hdr *flatHeader
	// recCells is reused as it is: the Assembler keeps nothing of it, and
	// every row emitted sets every column's key (the columns it lacks as
	// blank cells), so updating the keys allocates nothing where new keys
	// would.
	var recCells map[string]pipeline.Cell
	emitted := 0
	var letters []string // column -> its letters, as needed
	columnName := func(col int) string {
		if col >= len(letters) {
			letters = append(letters, make([]string, col+1-len(letters))...)
		}
		if letters[col] == "" {
			letters[col], _ = excelize.ColumnNumberToName(col)
		}
		return letters[col]
	}
	var refBuf []byte
	origin := func(row, col int, header string) pipeline.Origin {
		refBuf = strconv.AppendInt(append(refBuf[:0], columnName(col)...), int64(row), 10)
		return pipeline.Origin{File: file, Sheet: info.name, Cell: string(refBuf), Row: row, Column: col, Header: header}
	}
	var (
		typed   []pipeline.Cell // the row's cells, typed
		names   []string        // the row's cells' column names ("": not read)
		present []int           // column -> the last row (by rowSeq) with a cell in it
		rowSeq  int
		// The counter columns go to a slice (Record.Counters), as the flat
		// CSV reader's do: each place keeps its column's name and origin,
		// and a row sets its row, kind and text, so that a counter cell
		// costs no map update and the Assembler its per-column memo.
		counterCells []pipeline.CounterCell
		slot         []int // column -> its place in counterCells, -1 for the others
		otherCols    []int // the columns read that are not counters, in order
	)
	totals := b.tableTotalsRows(info)
	err := b.scanSheet(info, func(row int, cells []flatRawCell) bool {
		if row < headerRow {
			return true
		}
		if t, ok := totals[row]; ok && row > headerRow {
			ps.Warnf(pipeline.Origin{File: file, Sheet: info.name, Row: row}, "",
				"row %d is the Total Row of the Excel table %q (%s), not a plan row, so it is not read", row, t.name, t.ref)
			return true
		}
		if row == headerRow {
			var names []flatHeaderCell
			for i := range cells {
				rc := &cells[i]
				c := b.cell(rc, origin(row, rc.col, ""))
				names = append(names, flatHeaderCell{col: rc.col, text: c.Text, origin: c.Origin})
			}
			hdr = buildFlatHeader(names, cat, ps)
			recCells, present = nil, make([]int, len(hdr.names))
			counterCells, otherCols, slot = nil, nil, make([]int, len(hdr.names))
			for col := range slot {
				slot[col] = -1
			}
			for _, col := range hdr.cols {
				name := hdr.names[col]
				if !strings.HasPrefix(name, pipeline.CounterPrefix) {
					otherCols = append(otherCols, col)
					continue
				}
				slot[col] = len(counterCells)
				counterCells = append(counterCells, pipeline.CounterCell{Name: name, Cell: pipeline.Cell{
					Origin: pipeline.Origin{File: file, Sheet: info.name, Column: col, Header: name}}})
			}
			return true
		}
		rowSeq++
		typed, names = typed[:0], names[:0]
		nonBlank := false
		for i := range cells {
			rc := &cells[i]
			c := b.cell(rc, pipeline.Origin{}) // the place is added below, for the cells kept
			name, ok := hdr.name(rc.col)
			if !ok {
				if !hdr.named[rc.col] && !hdr.unheaded[rc.col] && c.Kind != pipeline.CellBlank {
					c.Origin = origin(row, rc.col, "")
					hdr.checkUnheaded(rc.col, c.Origin, c.Text, ps)
				}
			} else {
				present[rc.col] = rowSeq
				if c.Kind != pipeline.CellBlank {
					nonBlank = true
				}
			}
			typed, names = append(typed, c), append(names, name)
		}
		if !nonBlank {
			return true // a completely empty row
		}
		// The row's cells are placed by sheet, row and column, without a
		// cell reference string (pipeline.Origin derives it when needed):
		// a row allocates nothing for its places.
		if recCells == nil {
			recCells = make(map[string]pipeline.Cell, len(otherCols))
		}
		rec := pipeline.Record{Origin: pipeline.Origin{File: file, Sheet: info.name, Row: row}, Cells: recCells, Counters: counterCells}
		for k := range counterCells {
			// Blank unless the row has the cell (set below).
			cc := &counterCells[k]
			o := cc.Cell.Origin
			o.Row = row
			cc.Cell = pipeline.Cell{Origin: o}
		}
		for i, name := range names {
			if name == "" {
				continue
			}
			col := cells[i].col
			c := typed[i]
			if k := slot[col]; k >= 0 {
				c.Origin = counterCells[k].Cell.Origin
				counterCells[k].Cell = c
				continue
			}
			c.Origin = pipeline.Origin{File: file, Sheet: info.name, Row: row, Column: col, Header: name}
			rec.Cells[name] = c
		}
		for _, col := range otherCols {
			if present[col] != rowSeq {
				rec.Cells[hdr.names[col]] = pipeline.Cell{Origin: pipeline.Origin{File: file, Sheet: info.name, Row: row, Column: col, Header: hdr.names[col]}}
			}
		}
		emit(rec)
		emitted++
		return true
	})
	var se *flatScanError
	if errors.As(err, &se) {
		ps.Errorf(se.origin(file, info.name), "", "the sheet cannot be read to the end: %v", se.err)
	} else if err != nil {
		ps.Errorf(pipeline.Origin{File: file, Sheet: info.name}, "", "the sheet cannot be read to the end: %v", err)
	} else if emitted == 0 {
		ps.Warnf(pipeline.Origin{File: file, Sheet: info.name, Row: headerRow}, "", "the table has a header row but no rows below it, so the sheet changes nothing")
	}
}

// readXLSX reads one workbook with the default limits.
func readXLSX(file string, r io.ReaderAt, size int64, cat *pipeline.Catalog, emit func(pipeline.Record), ps *pipeline.Problems) {
	readXLSXLimited(file, r, size, Limits{}, cat, emit, ps)
}

// readXLSXLimited reads one workbook: the flat table when there is one,
// else the grid plan sheets.
func readXLSXLimited(file string, r io.ReaderAt, size int64, lim Limits, cat *pipeline.Catalog, emit func(pipeline.Record), ps *pipeline.Problems) {
	fileOrigin := pipeline.Origin{File: file}
	book, err := openFlatBook(r, size, lim)
	if err != nil {
		ps.Errorf(fileOrigin, "", "%v", err)
		return
	}
	sheet, headerRow, hidden, ok := book.findFlatSheet()
	if book.scanErr == nil && book.sstErr != nil && errors.Is(book.sstErr, errOversized) {
		book.scanErr = book.sstErr
	}
	if book.scanErr != nil {
		o := book.scanErrAt
		o.File = file
		ps.Errorf(o, "", "the workbook cannot be read: %v", book.scanErr)
		return
	}
	if ok {
		for _, other := range book.sheets {
			if other.hidden || other.name == sheet.name {
				continue
			}
			if r, found := book.flatHeaderRow(other); found {
				ps.Warnf(pipeline.Origin{File: file, Sheet: other.name, Row: r}, "",
					"this sheet also has a flat table header, but only one table is read from a workbook (sheet %q); move its rows there, or into a file of its own", sheet.name)
			} else if at, grid := book.gridSheetAt(file, other); grid {
				ps.Warnf(at, "",
					"sheet %q holds grid plan targets, but this workbook is read as a flat table (sheet %q); grid sheets are not read: move them to a workbook of their own", other.name, sheet.name)
			}
		}
		book.warnHiddenPlans(file, ps)
		book.readFlatSheet(file, sheet, headerRow, cat, emit, ps)
		if book.sstErr != nil {
			// A damaged table is an error even when no cell read needed
			// the entries past the damage.
			ps.Errorf(fileOrigin, "", "the workbook is damaged: %v", book.sstErr)
		}
		return
	}
	readXLSXGrids(file, lim, book, hidden, cat, emit, ps)
}

// flatTable is an Excel table (ListObject) of a sheet, as its totals rows
// concern the reader.
type flatTable struct {
	name, ref string
}

// flatMaxTables bounds the table parts of a sheet that are read.
const flatMaxTables = 64

// tableTotalsRows returns the sheet rows that are the totals rows of its
// Excel tables (xl/tables/tableN.xml, related to the sheet): the last
// totalsRowCount rows of each table's range. Excel writes totalsRowCount
// when the table's Total Row is switched on (totalsRowShown only says
// whether it ever was); such a row sums the columns and holds no plan.
func (b *flatBook) tableTotalsRows(info flatSheetInfo) map[int]flatTable {
	if info.path == "" {
		return nil
	}
	rels, err := b.rels(info.path)
	if err != nil {
		return nil
	}
	var out map[int]flatTable
	n := 0
	for _, r := range rels {
		if !strings.HasSuffix(r.Type, "/table") {
			continue
		}
		if n++; n > flatMaxTables {
			break
		}
		rc, err := b.openMeta(flatRelTarget(info.path, r.Target))
		if err != nil {
			continue
		}
		var t struct {
			Name        string `xml:"name,attr"`
			DisplayName string `xml:"displayName,attr"`
			Ref         string `xml:"ref,attr"`
			TotalsRows  int    `xml:"totalsRowCount,attr"`
		}
		err = xml.NewDecoder(rc).Decode(&t)
		rc.Close()
		if err != nil || t.TotalsRows <= 0 {
			continue
		}
		_, to, ok := strings.Cut(t.Ref, ":")
		if !ok {
			continue
		}
		_, last, err := excelize.CellNameToCoordinates(to)
		if err != nil {
			continue
		}
		name := t.DisplayName
		if name == "" {
			name = t.Name
		}
		if out == nil {
			out = map[int]flatTable{}
		}
		for row := last - min(t.TotalsRows, 16) + 1; row <= last; row++ {
			out[row] = flatTable{name: name, ref: t.Ref}
		}
	}
	return out
}

// hiddenPlanSheets returns the hidden sheets that hold plans: a flat table
// header, or grid plan targets in their first rows (gridSheetAt). They
// are never read (docs/formats.md: hidden sheets are never read); the
// readers name them, so that a plan is not passed over in silence.
func (b *flatBook) hiddenPlanSheets(file string) []string {
	var out []string
	for _, s := range b.sheets {
		if !s.hidden || s.path == "" {
			continue
		}
		if _, found := b.flatHeaderRow(s); found {
			out = append(out, s.name)
		} else if _, grid := b.gridSheetAt(file, s); grid {
			out = append(out, s.name)
		}
	}
	return out
}

// unhideAdvice says how to show a hidden sheet.
const unhideAdvice = "in Excel right-click a sheet tab and choose Unhide; in LibreOffice choose Sheet > Show Sheet"

// warnHiddenPlans gives one warning for the hidden sheets that hold plans
// beside the sheets read (older versions of a plan, usually).
func (b *flatBook) warnHiddenPlans(file string, ps *pipeline.Problems) {
	hidden := b.hiddenPlanSheets(file)
	if len(hidden) == 0 {
		return
	}
	if len(hidden) == 1 {
		ps.Warnf(pipeline.Origin{File: file, Sheet: hidden[0]}, "", "the hidden sheet %q holds plan targets and is not read, as hidden sheets never are; if it holds the plans to apply, unhide it (%s)", hidden[0], unhideAdvice)
		return
	}
	ps.Warnf(pipeline.Origin{File: file}, "", "the hidden sheets %s hold plan targets and are not read, as hidden sheets never are; if one holds the plans to apply, unhide it (%s)", strings.Join(flatQuoteEach(hidden), ", "), unhideAdvice)
}

// flatGridProbeRows is how many rows of a sheet beside a flat table are
// looked at to tell whether it is a grid plan sheet.
const flatGridProbeRows = 500

// gridSheetAt reports whether a sheet is a grid plan sheet, looking at its
// first rows, and where: the first grid label, else the sheet.
func (b *flatBook) gridSheetAt(file string, info flatSheetInfo) (pipeline.Origin, bool) {
	at := pipeline.Origin{File: file, Sheet: info.name}
	var text sheetText
	err := b.scanSheet(info, func(row int, cells []flatRawCell) bool {
		if row > flatGridProbeRows {
			return false
		}
		for len(text) < row {
			text = append(text, nil)
		}
		line := text[row-1]
		for i := range cells {
			rc := &cells[i]
			if rc.col < 1 || rc.col > 16384 {
				continue
			}
			for len(line) < rc.col {
				line = append(line, "")
			}
			line[rc.col-1] = b.cell(rc, pipeline.Origin{}).Text
		}
		text[row-1] = line
		return true
	})
	m := templates.NewMatcher(nil)
	if err != nil || len(text) == 0 || !isGridSheet(text, m) {
		return at, false
	}
	maxCol := text.maxCol()
	for r := 1; r <= len(text); r++ {
		for c := 1; c <= len(text[r-1]); c++ {
			if _, ok := parseGridLabel(text.at(r, c)); !ok {
				continue
			}
			for rr := r + 1; rr <= r+4; rr++ {
				if countRaceCells(text, rr, c, maxCol, m) > 0 {
					ref, _ := excelize.CoordinatesToCellName(c, r)
					at.Cell, at.Row, at.Column = ref, r, c
					return at, true
				}
			}
		}
	}
	return at, true
}

func flatQuoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// flatExcelizeError words excelize's errors for a consultant.
func flatExcelizeError(err error) string {
	switch {
	case errors.Is(err, excelize.ErrWorkbookFileFormat):
		return errFlatNotZip.Error()
	case errors.Is(err, excelize.ErrWorkbookPassword), strings.Contains(err.Error(), "password"):
		return errFlatEncrypted.Error()
	case strings.Contains(err.Error(), "zip"):
		return errFlatDamaged.Error()
	}
	return err.Error()
}
