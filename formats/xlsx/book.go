package xlsx

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// A worksheet is read as a stream: its XML is tokenized straight out of
// the zip archive (Scanner), one row at a time, so memory stays flat
// however many rows the sheet has.
// excelize's row iterator (File.Rows) streams too, but gives only the
// cells' text, and validation needs each cell's type (a date cell, a
// number, an error value, a formula without a cached value) and its number
// format (dates, zero padding); so the reader decodes the same XML itself
// and uses the workbook's styles, shared strings and date system.

// Book is an opened XLSX package with what its readers need.
type Book struct {
	Zip       *zip.Reader
	Files     map[string]*zip.File
	Sheets    []Sheet
	date1904  bool
	xfs       []cellFormat // cellXfs by index
	sstPath   string
	sst       []string
	SSTErr    error
	sstDone   bool
	ScanErr   error             // the first error that stops every read (noteScanError)
	ScanErrAt pipeline.Origin   // where
	texts     map[string]string // inline strings read, which repeat from row to row
	// recalcOnLoad is set when the workbook asks to be recalculated when
	// opened (<calcPr fullCalcOnLoad="1"/>, as XlsxWriter and other
	// writers that never calculate set it): its saved formula results are
	// placeholders (XlsxWriter saves 0), so every formula cell reads as
	// having no saved result.
	recalcOnLoad bool
}

type Sheet struct {
	Name   string
	Path   string // part name in the zip, "" when missing
	Hidden bool
}

// cellFormat is what the reader needs of a cell format (an xf of cellXfs).
type cellFormat struct {
	date  bool   // a date format: numbers are dates
	padTo int    // a format of only zeros ("0000000000"): integers are zero-padded to this width
	unit  string // "%" or a currency symbol: what the format shows a number as (numberUnit)
}

// Reasons a workbook cannot be read, in plain words.
var (
	errEncrypted = errors.New("the file is password-protected (encrypted) or an old-style .xls workbook; eepipe reads .xlsx workbooks: remove the password, or open it in Excel or LibreOffice and save it as .xlsx")
	errNotZip    = errors.New("the file is not an XLSX workbook (an XLSX file is a zip archive, and this one is not); save it as .xlsx from Excel or LibreOffice")
	errDamaged   = errors.New("the workbook is damaged or truncated (its zip archive cannot be read); save it again from Excel or LibreOffice, or copy it again")
	errFlatNoWB  = errors.New("the zip archive is not an XLSX workbook (it has no workbook part)")
)

var OLEMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// Open opens an XLSX package for streaming reads, within the
// limits: the archive's list of parts, the total size its parts unpack to
// (archive/zip holds each part to the size it declares) and each part's
// compression ratio are checked before anything is unpacked.
func Open(r io.ReaderAt, size int64, lim Limits) (*Book, error) {
	head := make([]byte, 8)
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	switch {
	case n == 0:
		return nil, errors.New("the file is empty")
	case bytes.HasPrefix(head, OLEMagic):
		return nil, errEncrypted
	case !bytes.HasPrefix(head, []byte("PK")):
		if looksLikeText(head) {
			return nil, errors.New("the file is not an XLSX workbook: it holds text (a CSV file with an .xlsx name?); give CSV files a .csv name")
		}
		return nil, errNotZip
	}
	if err := checkCentralDir(r, size); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, errDamaged
	}
	b := &Book{Zip: zr, Files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		b.Files[strings.TrimPrefix(strings.ReplaceAll(f.Name, "\\", "/"), "/")] = f
	}
	total, ok := b.PlausibleSize()
	if !ok {
		return nil, errDamaged
	}
	if max := lim.maxUncompressed(); total > max {
		return nil, LimitErrorf("the file is oversized or damaged: the workbook unpacks to %s, more than the limit of %s (--max-uncompressed)", SizeText(total), SizeText(max))
	}
	if err := b.readWorkbook(); err != nil {
		return nil, err
	}
	if err := b.readStyles(); err != nil {
		return nil, err
	}
	return b, nil
}

func looksLikeText(b []byte) bool {
	for _, c := range b {
		if c < 0x09 || (c > 0x0d && c < 0x20) {
			return false
		}
	}
	return true
}

// maxRatio is more than deflate's best compression ratio (about 1032:1).
const maxRatio = 1100

// PlausibleSize checks the sizes the archive declares against what its
// compressed data can hold, and returns the total declared size.
func (b *Book) PlausibleSize() (int64, bool) {
	var total uint64
	for _, f := range b.Zip.File {
		if f.UncompressedSize64 > f.CompressedSize64*maxRatio+(1<<16) {
			return 0, false
		}
		total += f.UncompressedSize64
	}
	if total > 1<<40 {
		return 0, false
	}
	return int64(total), true
}

// checkCentralDir checks the size of the zip archive's central
// directory (its list of parts), which zip.NewReader reads whole, from the
// end-of-directory record, before the archive is opened.
func checkCentralDir(r io.ReaderAt, size int64) error {
	const eocdLen, maxComment = 22, 1 << 16
	tailLen := min(size, eocdLen+maxComment)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return errDamaged
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
			return errDamaged
		}
		if _, err := r.ReadAt(rec, off); err != nil || !bytes.HasPrefix(rec, []byte("PK\x06\x06")) {
			return errDamaged
		}
		cdSize = binary.LittleEndian.Uint64(rec[40:])
	}
	if cdSize > maxCentralDir {
		return LimitErrorf("the file is oversized or damaged: its zip archive's list of parts takes %s, more than the %s an XLSX workbook needs", SizeText(int64(min(cdSize, 1<<62))), SizeText(maxCentralDir))
	}
	return nil
}

// OpenMeta returns a reader of a part decoded whole (workbook,
// relationships, styles), which must be at most MaxMetaPart.
func (b *Book) OpenMeta(name string) (io.ReadCloser, error) {
	if f, ok := b.Files[name]; ok && f.UncompressedSize64 > MaxMetaPart {
		return nil, LimitErrorf("the file is oversized or damaged: its part %s unpacks to %s, more than the %s such a part needs", quotePrefix([]byte(name)), SizeText(int64(min(f.UncompressedSize64, 1<<62))), SizeText(MaxMetaPart))
	}
	return b.Open(name)
}

// Open returns a reader of a part; damaged entries give errDamaged.
func (b *Book) Open(name string) (io.ReadCloser, error) {
	f, ok := b.Files[name]
	if !ok {
		return nil, fmt.Errorf("part %s is missing", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, errDamaged
	}
	return rc, nil
}

type Rel struct {
	ID     string `xml:"Id,attr"`
	Type   string `xml:"Type,attr"`
	Target string `xml:"Target,attr"`
}

func (b *Book) Rels(part string) ([]Rel, error) {
	name := path.Join(path.Dir(part), "_rels", path.Base(part)+".rels")
	rc, err := b.OpenMeta(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var doc struct {
		Rels []Rel `xml:"Relationship"`
	}
	if err := xml.NewDecoder(rc).Decode(&doc); err != nil {
		return nil, errDamaged
	}
	return doc.Rels, nil
}

func RelTarget(base, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(target, "/")
	}
	return path.Clean(path.Join(path.Dir(base), target))
}

func (b *Book) readWorkbook() error {
	wbPath := "xl/workbook.xml"
	if rels, err := b.Rels(""); err == nil {
		for _, r := range rels {
			if strings.HasSuffix(r.Type, "/officeDocument") {
				wbPath = RelTarget("", r.Target)
			}
		}
	}
	if _, ok := b.Files[wbPath]; !ok {
		return errFlatNoWB
	}
	rc, err := b.OpenMeta(wbPath)
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
		return errDamaged
	}
	if wb.Pr != nil {
		v := strings.ToLower(wb.Pr.Date1904)
		b.date1904 = v == "1" || v == "true"
	}
	if wb.Calc != nil {
		v := strings.ToLower(wb.Calc.FullCalcOnLoad)
		b.recalcOnLoad = v == "1" || v == "true"
	}
	rels, _ := b.Rels(wbPath)
	byID := map[string]Rel{}
	for _, r := range rels {
		byID[r.ID] = r
		switch {
		case strings.HasSuffix(r.Type, "/sharedStrings"):
			b.sstPath = RelTarget(wbPath, r.Target)
		}
	}
	for _, s := range wb.Sheets {
		info := Sheet{Name: s.Name, Hidden: s.State == "hidden" || s.State == "veryHidden"}
		for _, a := range s.Attrs {
			if a.Name.Local == "id" {
				if r, ok := byID[a.Value]; ok && strings.HasSuffix(r.Type, "/worksheet") {
					info.Path = RelTarget(wbPath, r.Target)
				}
			}
		}
		b.Sheets = append(b.Sheets, info)
	}
	return nil
}

// readStyles reads the cell formats; a missing or damaged styles part only
// means every number is a plain number, but one beyond MaxMetaPart is
// an oversized file.
func (b *Book) readStyles() error {
	var stylesPath string
	for name := range b.Files {
		if strings.HasSuffix(name, "styles.xml") && strings.HasPrefix(name, "xl/") {
			stylesPath = name
		}
	}
	if stylesPath == "" {
		return nil
	}
	rc, err := b.OpenMeta(stylesPath)
	if err != nil {
		if errors.Is(err, ErrOversized) {
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
	b.xfs = make([]cellFormat, len(ss.Xfs))
	for i, xf := range ss.Xfs {
		code := codes[xf.NumFmtID]
		b.xfs[i] = cellFormat{date: isDateFormat(xf.NumFmtID, code), padTo: zeroPadWidth(code), unit: numberUnit(xf.NumFmtID, code)}
	}
	return nil
}

// zeroPadWidth returns the width of a number format made only of zeros
// ("0000000000" pads a VAT number typed as a number), or 0.
func zeroPadWidth(code string) int {
	code, _, _ = strings.Cut(code, ";")
	code = strings.Trim(code, `"`)
	if len(code) < 2 || strings.Trim(code, "0") != "" {
		return 0
	}
	return len(code)
}

// SharedStrings loads the shared string table once, within bounds: at
// most MaxSSTStrings entries and maxSSTBytes of text, each entry
// at most MaxCellChars characters, each XML token at most defaultMaxToken.
// The error says what is wrong with the table.
func (b *Book) SharedStrings() ([]string, error) {
	if b.sstDone {
		return b.sst, b.SSTErr
	}
	b.sstDone = true
	if b.sstPath == "" {
		if _, ok := b.Files["xl/sharedStrings.xml"]; !ok {
			return nil, nil
		}
		b.sstPath = "xl/sharedStrings.xml"
	}
	rc, err := b.Open(b.sstPath)
	if err != nil {
		b.SSTErr = fmt.Errorf("the shared string table (%s) cannot be read: %w", b.sstPath, err)
		return nil, b.SSTErr
	}
	defer rc.Close()
	b.sst, b.SSTErr = ReadSST(rc)
	if b.SSTErr != nil {
		b.SSTErr = fmt.Errorf("the shared string table (%s) cannot be read: %w", b.sstPath, b.SSTErr)
	}
	return b.sst, b.SSTErr
}

// ReadSST reads a shared string table part. On an error it returns the
// entries read before it.
func ReadSST(r io.Reader) ([]string, error) {
	sc := NewScanner(r)
	var (
		sst       []string
		total     int
		cur       []byte
		inT, inSI bool
		skip      int // depth inside rPh (phonetic runs), not part of the text
	)
	for {
		err := sc.Next()
		if err == io.EOF {
			if inSI {
				return sst, fmt.Errorf("entry %d is not closed: the part is truncated or damaged", len(sst))
			}
			return sst, nil
		}
		if err != nil {
			if errors.Is(err, ErrOversized) {
				return sst, fmt.Errorf("at entry %d: %w", len(sst), err)
			}
			return sst, fmt.Errorf("at entry %d: the XML is malformed (the workbook is damaged)", len(sst))
		}
		switch sc.Kind {
		case TokStart:
			switch knownName(sc.Name) {
			case "si":
				inSI, cur, skip = true, cur[:0], 0
			case "rPh":
				if !sc.Self {
					skip++
				}
			case "t":
				inT = inSI && skip == 0 && !sc.Self
			}
			if sc.Self && knownName(sc.Name) == "si" {
				inSI = false
				if len(sst) >= MaxSSTStrings {
					return sst, LimitErrorf("the file is oversized or damaged: the table has more than %d entries", MaxSSTStrings)
				}
				sst = append(sst, "")
			}
		case TokEnd:
			switch knownName(sc.Name) {
			case "si":
				if !inSI {
					continue
				}
				inSI = false
				if len(sst) >= MaxSSTStrings {
					return sst, LimitErrorf("the file is oversized or damaged: the table has more than %d entries", MaxSSTStrings)
				}
				if tooManyChars(cur) {
					return sst, fmt.Errorf("entry %d: %w", len(sst), cellTooLong())
				}
				total += len(cur)
				if total > maxSSTBytes {
					return sst, LimitErrorf("the file is oversized or damaged: the table holds more than %s of text", SizeText(maxSSTBytes))
				}
				sst = append(sst, decodeEscapes(string(cur)))
			case "rPh":
				if skip > 0 {
					skip--
				}
			case "t":
				inT = false
			}
		case TokText:
			if inT {
				cur = append(cur, sc.Text...)
				if len(cur) > maxCellBytes {
					return sst, fmt.Errorf("entry %d: %w", len(sst), cellTooLong())
				}
			}
		}
	}
}

// decodeEscapes turns _xHHHH_ escapes of OOXML strings into characters.
func decodeEscapes(s string) string {
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
