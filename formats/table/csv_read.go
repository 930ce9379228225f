package table

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/gocarina/gocsv"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// maxCSVParseErrors bounds how many malformed lines of one file are
// reported before the reader gives up on the file.
const maxCSVParseErrors = 20

// ReadCSV streams a flat CSV table into emit: UTF-8 with or without a
// byte-order mark (UTF-16 with a mark is decoded too), the delimiter
// detected from the header line among , ; and tab, RFC 4180 quoting. Every
// cell keeps its line (the line its field starts on, so multi-line quoted
// fields do not shift later lines) and column. emit must neither keep nor
// change the record's Cells map and Counters slice: they are reused for
// the next row.
func ReadCSV(file string, r io.Reader, cat *pipeline.Catalog, words *mapping.File, emit func(pipeline.Record), ps *pipeline.Problems) {
	br, delim, skipped, ok := csvOpen(file, r, ps)
	if !ok {
		return
	}
	var cr *csv.Reader
	pos := func(field int) int {
		l, _ := cr.FieldPos(field)
		return l + skipped
	}
	s := csvRows{file: file, cat: cat, words: words, ps: ps, skipped: skipped, fixed: new(pipeline.RowCells)}

	// The records are read through a bound: a line or a record (a quoted
	// field may span lines) longer than any table has ends the file's
	// reading, so that /dev/zero or a runaway quote cannot exhaust memory.
	bound := &csvBoundReader{r: br, line: skipped + 1}
	if r, ok := gocsv.DefaultCSVReader(bound).(*csv.Reader); ok {
		cr = r
	} else {
		cr = csv.NewReader(bound)
	}
	cr.Comma = delim
	cr.FieldsPerRecord = -1 // counts are checked here, with a plain message
	cr.ReuseRecord = true

	s.nextLine = skipped + 1 // where the next record starts, as far as known
	for {
		fields, err := cr.Read()
		bound.recordDone()
		if err == io.EOF {
			break
		}
		next, stop := s.readFailed(fields, err, pos)
		if stop {
			return
		}
		if next == csvBreak {
			break
		}
		if next == csvContinue {
			continue
		}
		s.records++
		line := pos(0)
		rowValid := csvFieldsValid(fields)
		if !rowValid && !s.utf8Reported {
			s.utf8Reported = true
			ps.Errorf(pipeline.Origin{File: file, Row: line}, "", "the file is not UTF-8 text (first seen on this line); save it as \"CSV UTF-8\" so that names and accents read correctly")
		}
		if s.hdr == nil && s.long == nil {
			if s.records > templates.FlatHeaderRows {
				break
			}
			s.header(fields, line, pos)
			continue
		}
		s.row(fields, line, rowValid, pos, emit)
	}
	s.finish(delim, emit)
}

// csvRows is the state of ReadCSV's row loop: the header found, the
// counts its closing messages need, and the record reused row to row.
type csvRows struct {
	file    string
	cat     *pipeline.Catalog
	words   *mapping.File // the mapping file's column names; nil: none
	ps      *pipeline.Problems
	skipped int

	hdr          *flatHeader
	long         *longTable
	hdrLine      int
	hdrFields    int
	records      int
	parseErrors  int
	badCount     int
	firstBad     int
	firstBadN    int
	utf8Reported bool
	cells        map[string]pipeline.Cell
	counterCells []pipeline.CounterCell
	colKind      []uint8  // by field: csvColUnread, csvColCounter or csvColPlan (every row has the header's fields)
	colNames     []string // by field: hdr.name
	fixedAt      []int    // by field: the index in pipeline.RowColumns of a csvColFixed
	fixed        *pipeline.RowCells
	emitted      int
	nextLine     int // where the next record starts, as far as known
}

// What ReadCSV's loop does after readFailed: read the record, go on to
// the next one, or stop reading (and still close the file's messages).
const (
	csvRead = iota
	csvContinue
	csvBreak
)

// readFailed (pos: the line a field of the record starts on) handles what cr.Read returned other than a record to read:
// a bound passed or too many fields (stop: the file's reading ends with
// no closing messages), a malformed line (csvContinue) or a read error
// (csvBreak). For a record read it notes where the next one starts.
func (s *csvRows) readFailed(fields []string, err error, pos func(field int) int) (next int, stop bool) {
	file, ps := s.file, s.ps
	var le *csvLimitError
	if errors.As(err, &le) {
		line := le.line
		if le.record {
			line = s.nextLine
		}
		ps.Errorf(pipeline.Origin{File: file, Row: line}, "", "%v; the rest of the file was not read", le)
		return 0, true
	}
	if err == nil && len(fields) > xlsx.MaxRowCells {
		ps.Errorf(pipeline.Origin{File: file, Row: pos(0)}, "", "the file is oversized or damaged: the line has %d fields, more than the %d columns a table has; the rest of the file was not read", len(fields), xlsx.MaxRowCells)
		return 0, true
	}
	if err == nil && len(fields) > 0 {
		last := len(fields) - 1
		s.nextLine = pos(last) + strings.Count(fields[last], "\n") + 1
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			s.parseErrors++
			ps.Errorf(pipeline.Origin{File: file, Row: pe.StartLine + s.skipped}, "", "%s", csvParseMessage(pe, s.skipped))
			if s.parseErrors >= maxCSVParseErrors {
				ps.Errorf(pipeline.Origin{File: file}, "", "more than %d malformed lines; the rest of the file was not read", maxCSVParseErrors)
				return 0, true
			}
			return csvContinue, false
		}
		ps.Errorf(pipeline.Origin{File: file}, "", "the file cannot be read to the end: %v", err)
		return csvBreak, false
	}
	return csvRead, false
}

// csvFieldsValid reports whether every field is UTF-8
// (strings.ToValidUTF8 would change none).
func csvFieldsValid(fields []string) bool {
	for _, f := range fields {
		var or byte // every byte of f ORed: ASCII text stays below utf8.RuneSelf
		for j := 0; j < len(f); j++ {
			or |= f[j]
		}
		// Not ASCII: the whole field is checked.
		if or >= utf8.RuneSelf && !utf8.ValidString(f) {
			return false
		}
	}
	return true
}

// header reads a record above the header row: if it is the header row,
// the flat or long table it heads is set up.
func (s *csvRows) header(fields []string, line int, pos func(field int) int) {
	if !csvIsHeaderRow(fields) {
		return
	}
	var names []flatHeaderCell
	for i, f := range fields {
		l := pos(i)
		names = append(names, flatHeaderCell{col: i + 1, text: f, origin: pipeline.Origin{File: s.file, Row: l, Column: i + 1}})
	}
	if isLongHeader(fields) {
		s.long = newLongTable(s.file, names, s.cat, s.ps)
	} else {
		s.hdr = buildFlatHeader(names, s.cat, s.words, s.ps)
	}
	s.hdrLine, s.hdrFields = line, len(fields)
}

// row reads a record below the header row: a blank one is skipped, one
// with another number of fields counted, a long table's added to it, and
// a flat table's emitted if any column read has a value.
func (s *csvRows) row(fields []string, line int, rowValid bool, pos func(field int) int, emit func(pipeline.Record)) {
	if csvAllBlank(fields) {
		return
	}
	if len(fields) != s.hdrFields {
		if s.badCount == 0 {
			s.firstBad, s.firstBadN = line, len(fields)
		}
		s.badCount++
		return
	}
	if s.long != nil {
		s.long.add(fields, line, pos)
		return
	}
	if s.cells == nil {
		s.cells = make(map[string]pipeline.Cell, len(s.hdr.byCol))
	}
	// The Assembler keeps nothing of a record's map, so it is reused
	// as it is: every row has every column (a row with another number
	// of fields is not read), so each row sets every key again, and
	// updating a key allocates nothing where a new key would.
	// The counter columns go to a slice, reused as the map is: every
	// row has the same columns, so each place of the slice keeps its
	// column's name and origin, and a row sets its line, kind and text.
	if s.colKind == nil {
		s.columns()
	}
	s.cellsOf(fields, line, rowValid, pos, emit)
}

// columns decides, once, what each field is (a counter, a plan column,
// a column not read) and each counter cell's name and origin: every row
// has the header's fields.
func (s *csvRows) columns() {
	file, hdr := s.file, s.hdr
	s.colKind, s.colNames, s.fixedAt = make([]uint8, s.hdrFields), make([]string, s.hdrFields), make([]int, s.hdrFields)
	colKind, colNames, fixedAt := s.colKind, s.colNames, s.fixedAt
	for i := range colKind {
		colNames[i], _ = hdr.name(i + 1)
		switch {
		case colNames[i] == "":
			colKind[i] = csvColUnread
		case strings.HasPrefix(colNames[i], pipeline.CounterPrefix):
			colKind[i] = csvColCounter
			name := colNames[i]
			s.counterCells = append(s.counterCells, pipeline.CounterCell{Name: name, Cell: pipeline.Cell{Origin: pipeline.Origin{File: file, Column: i + 1, Header: name}}})
		case pipeline.RowColumnIndex(colNames[i]) >= 0:
			colKind[i] = csvColFixed
			fixedAt[i] = pipeline.RowColumnIndex(colNames[i])
		default:
			colKind[i] = csvColPlan
		}
	}
}

// cellsOf fills the reused record with a flat table row's cells and
// emits it, unless nothing is in the columns read.
func (s *csvRows) cellsOf(fields []string, line int, rowValid bool, pos func(field int) int, emit func(pipeline.Record)) {
	file, hdr, ps := s.file, s.hdr, s.ps
	colKind, colNames, fixedAt, counterCells := s.colKind, s.colNames, s.fixedAt, s.counterCells
	fixed := s.fixed
	rec := pipeline.Record{Origin: pipeline.Origin{File: file, Row: line}, Cells: s.cells, Fixed: fixed}
	nonBlank := false
	k := 0
	// A record on one line (the usual case) has every field on it.
	oneLine := pos(len(fields)-1) == line
	for i, f := range fields {
		fieldLine := line
		if !oneLine {
			fieldLine = pos(i)
		}
		ck := colKind[i]
		if ck == csvColUnread {
			hdr.checkUnheaded(i+1, pipeline.Origin{File: file, Row: fieldLine, Column: i + 1}, f, ps)
			continue
		}
		kind, text := pipeline.CellBlank, ""
		// (A first byte that is ASCII and not a space is not trimmed.)
		if (len(f) > 0 && f[0] > ' ' && f[0] < utf8.RuneSelf) || strings.TrimSpace(f) != "" {
			kind = pipeline.CellText
			if !rowValid {
				f = strings.ToValidUTF8(f, "\uFFFD")
			}
			text = f
			if f[0] == '\'' { // (CSVUnsafeField changes only a field that starts with ')
				text = CSVUnsafeField(f)
			}
			nonBlank = true
		}
		if ck == csvColCounter {
			cc := &counterCells[k].Cell
			k++
			cc.Origin.Row = fieldLine
			cc.Kind, cc.Text = kind, text
			continue
		}
		name := colNames[i]
		if ck == csvColFixed {
			fixed.Cells[fixedAt[i]] = pipeline.Cell{Origin: pipeline.Origin{File: file, Row: fieldLine, Column: i + 1, Header: name}, Kind: kind, Text: text}
			fixed.Has[fixedAt[i]] = true
			continue
		}
		rec.Cells[name] = pipeline.Cell{Origin: pipeline.Origin{File: file, Row: fieldLine, Column: i + 1, Header: name}, Kind: kind, Text: text}
	}
	rec.Counters = counterCells[:k]
	if !nonBlank {
		return // nothing in the columns read (a note in an ignored column)
	}
	emit(rec)
	s.emitted++
}

// finish closes the file's reading: a long table's rows emitted, and
// the messages for no header row, no rows, and lines with the wrong
// number of fields.
func (s *csvRows) finish(delim rune, emit func(pipeline.Record)) {
	file, ps := s.file, s.ps
	if s.long != nil {
		s.emitted += s.long.flush(emit)
	}
	if s.hdr == nil && s.long == nil {
		if s.parseErrors == 0 {
			ps.Errorf(pipeline.Origin{File: file}, "", "no header row: none of the first %d lines has a column named target_type; the header row names the columns (plan_name, start_date, ..., target_type, number_of_...)", templates.FlatHeaderRows)
		}
		return
	}
	if s.emitted == 0 && s.badCount == 0 && s.parseErrors == 0 {
		ps.Warnf(pipeline.Origin{File: file, Row: s.hdrLine}, "", "the table has a header row but no rows below it, so the file changes nothing")
	}
	if s.badCount > 0 {
		more := ""
		if s.badCount > 1 {
			more = fmt.Sprintf(" (%d lines in all have the wrong number of fields; they were not read)", s.badCount)
		}
		ps.Errorf(pipeline.Origin{File: file, Row: s.firstBad}, "",
			"line %d has %d fields, but the header row (line %d) has %d%s; every line needs the same number of fields: a value that contains the delimiter %s must be in double quotes",
			s.firstBad, s.firstBadN, s.hdrLine, s.hdrFields, more, csvDelimiterName(delim))
	}
}

// csvOpen readies a flat CSV file for reading: its byte order mark or
// UTF-16 decoded, lone CR line ends split, the delimiter detected (or
// named by Excel's "sep=" first line, then skipped: skipped lines). A
// file that is empty or not CSV text is an error in ps and false.
func csvOpen(file string, r io.Reader, ps *pipeline.Problems) (br *bufio.Reader, delim rune, skipped int, ok bool) {
	br, delim, skipped, ok = csvOpenAs(file, "a flat CSV file needs a header row with a target_type column and one row per plan, year and target type", r, ps)
	if ok && delim == 0 {
		peek, _ := br.Peek(64 << 10)
		delim = csvDetectDelimiter(peek)
	}
	return br, delim, skipped, ok
}

// csvOpenAs readies a CSV file for reading as csvOpen does, leaving the
// delimiter to the caller unless Excel's "sep=" first line names it (then
// skipped is 1; else sep is 0). empty says what the file needs, for the
// message of an empty file.
func csvOpenAs(file, empty string, r io.Reader, ps *pipeline.Problems) (br *bufio.Reader, sep rune, skipped int, ok bool) {
	fileOrigin := pipeline.Origin{File: file}
	br = bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4)
	switch {
	case len(head) == 0:
		ps.Errorf(fileOrigin, "", "the file is empty: %s", empty)
		return nil, 0, 0, false
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		dec := unicode.BOMOverride(unicode.UTF8.NewDecoder())
		br = bufio.NewReaderSize(transform.NewReader(br, dec), 64<<10)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		ps.Errorf(fileOrigin, "", "the file is an XLSX workbook, not CSV text; give it an .xlsx name")
		return nil, 0, 0, false
	case bytes.HasPrefix(head, xlsx.OLEMagic[:4]):
		ps.Errorf(fileOrigin, "", "the file is an Excel workbook (.xls or password-protected), not CSV text; save it as CSV UTF-8 or as .xlsx")
		return nil, 0, 0, false
	}
	peek, _ := br.Peek(64 << 10)
	if csvLoneCRLineEnds(peek) {
		// Excel for Mac's "CSV (Macintosh)" ends lines with a lone CR,
		// which encoding/csv does not split on.
		br = bufio.NewReaderSize(&csvCRReader{r: br, fieldStart: true}, 64<<10)
		peek, _ = br.Peek(64 << 10)
	}
	if len(bytes.TrimSpace(peek)) == 0 {
		ps.Errorf(fileOrigin, "", "the file is empty: %s", empty)
		return nil, 0, 0, false
	}
	// Excel's "sep=;" first line names the delimiter.
	if first, _, _ := bytes.Cut(peek, []byte("\n")); bytes.HasPrefix(bytes.ToLower(first), []byte("sep=")) {
		if r := []rune(strings.TrimSpace(string(first[4:]))); len(r) == 1 {
			_, _ = br.Discard(len(first) + 1)
			return br, r[0], 1, true
		}
	}
	return br, 0, 0, true
}

// What a flat CSV field is, by its header (ReadCSV's colKind).
const (
	csvColUnread  uint8 = iota + 1 // no header read: checked by checkUnheaded
	csvColCounter                  // a counter: a place of Record.Counters
	csvColFixed                    // a plan or year column: a place of Record.Fixed
	csvColPlan                     // another column: a key of Record.Cells
)

// csvLoneCRLineEnds reports whether the first line end of head outside
// double quotes is a lone CR (not followed by LF).
func csvLoneCRLineEnds(head []byte) bool {
	inQuotes := false
	for i, c := range head {
		switch {
		case c == '"':
			inQuotes = !inQuotes
		case inQuotes:
		case c == '\n':
			return false
		case c == '\r':
			return i+1 < len(head) && head[i+1] != '\n'
		}
	}
	return false
}

// csvCRReader turns the line ends of CSV text outside quoted values into
// LF: a lone CR and CR LF alike (encoding/csv then counts every line). A CR
// inside a quoted value stays as it is. A quoted value starts with a double
// quote at the start of a field (after a line end or one of the delimiters
// detected); inside it, "" is a quote.
type csvCRReader struct {
	r          io.Reader
	inQuotes   bool
	closed     bool // the last byte closed a quoted value (it may be the first of "")
	fieldStart bool
	afterCR    bool // the last byte was a CR turned into LF: an LF next is dropped
}

func (c *csvCRReader) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		w := 0
		for _, b := range p[:n] {
			switch {
			case c.inQuotes:
				if b == '"' {
					c.inQuotes, c.closed = false, true
				}
				p[w] = b
				w++
				c.afterCR, c.fieldStart = false, false
				continue
			case b == '"' && (c.fieldStart || c.closed):
				c.inQuotes = true
			case b == '\n' && c.afterCR:
				c.afterCR = false
				continue // the LF of a CR LF already written
			case b == '\r':
				b = '\n'
				c.afterCR, c.closed, c.fieldStart = true, false, true
				p[w] = b
				w++
				continue
			}
			c.closed = false
			c.afterCR = false
			c.fieldStart = b == '\n' || b == ',' || b == ';' || b == '\t'
			p[w] = b
			w++
		}
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}

func csvParseMessage(pe *csv.ParseError, skipped int) string {
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Sprintf("column %d: a double quote (\") inside a value that is not in quotes; put the whole value in double quotes and write the quote inside it twice (\"\")", pe.Column)
	case errors.Is(pe.Err, csv.ErrQuote):
		return fmt.Sprintf("a quoted value that starts on line %d is not closed properly (line %d, column %d): every opening double quote needs a closing one, followed by the delimiter or the end of the line", pe.StartLine+skipped, pe.Line+skipped, pe.Column)
	}
	return fmt.Sprintf("line %d, column %d: the line cannot be read as CSV (%v)", pe.Line+skipped, pe.Column, pe.Err)
}

func csvDelimiterName(r rune) string {
	switch r {
	case '\t':
		return "(tab)"
	case ';':
		return "(;)"
	}
	return "(,)"
}

// csvDetectDelimiter picks the delimiter of the header line (the first of the
// first 20 lines that mentions target_type, else the first line): the one
// of , ; and tab it holds most often outside double quotes.
func csvDetectDelimiter(head []byte) rune {
	lines := bytes.SplitN(head, []byte("\n"), templates.FlatHeaderRows+1)
	if len(lines) > templates.FlatHeaderRows {
		lines = lines[:templates.FlatHeaderRows]
	}
	line := lines[0]
	for _, l := range lines {
		if bytes.Contains(bytes.ToLower(l), []byte(pipeline.ColTargetType)) {
			line = l
			break
		}
	}
	return pipeline.HeaderDelimiter(string(line))
}

func csvIsHeaderRow(fields []string) bool {
	for _, f := range fields {
		if templates.IsFlatHeaderCell(f) {
			return true
		}
	}
	return false
}

func csvAllBlank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// csvBoundReader passes a CSV file's bytes to encoding/csv, failing with a
// *csvLimitError once a line passes xlsx.MaxCSVLine bytes or a record
// xlsx.MaxCSVRecord (recordDone marks the end of each record read; encoding/csv
// reads a few kilobytes ahead, which the bound does not need to count
// exactly).
type csvBoundReader struct {
	r        io.Reader
	line     int // the line being read, 1-based
	sinceNL  int // bytes since the last line end
	sinceRec int // bytes since the last record
	err      error
}

// csvLimitError is a CSV line or record beyond its bound.
type csvLimitError struct {
	line   int
	record bool // a record too long (its first line is known to the caller)
	msg    string
}

func (e *csvLimitError) Error() string { return e.msg }

// Is makes a CSV line or record too long an oversized file.
func (e *csvLimitError) Is(target error) bool { return target == xlsx.ErrOversized }

func (b *csvBoundReader) recordDone() {
	b.sinceRec = 0
}

func (b *csvBoundReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			b.sinceNL += len(rest)
			break
		}
		b.sinceNL, b.line = 0, b.line+1
		rest = rest[i+1:]
	}
	b.sinceRec += n
	switch {
	case b.sinceNL > xlsx.MaxCSVLine:
		b.err = &csvLimitError{line: b.line, msg: fmt.Sprintf("the file is oversized or damaged: the line is longer than %s (no CSV table has such lines)", xlsx.SizeText(xlsx.MaxCSVLine))}
	case b.sinceRec > xlsx.MaxCSVRecord+64<<10:
		b.err = &csvLimitError{record: true, msg: fmt.Sprintf("the file is oversized or damaged: the record starting on this line is longer than %s (a quoted field that never ends?)", xlsx.SizeText(xlsx.MaxCSVRecord))}
	}
	if b.err != nil {
		return n, b.err
	}
	return n, err
}
