package table

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// ReadCSVRecords streams the records of a CSV file that is not a plan
// table (an HR roster), opened as ReadCSV opens a flat table: a byte order
// mark or UTF-16 decoded, lone CR line ends split, Excel's "sep=" line,
// the same bounds on a line and a record. The delimiter is the one of , ;
// and tab that the header line holds most: the first of the first
// templates.FlatHeaderRows lines for which isHeader is true, else the first line. emit
// gets each record's line and fields (reused for the next record: copy
// what is kept) and returns false to stop. A malformed line is an error
// in ps and is skipped; a file that is empty or not CSV text is an error
// in ps and nothing is emitted. what says what the file needs, for
// the message of an empty file.
func ReadCSVRecords(file, what string, r io.Reader, isHeader func(line []byte) bool, emit func(line int, fields []string) bool, ps *pipeline.Problems) {
	br, delim, skipped, ok := csvOpenAs(file, what, r, ps)
	if !ok {
		return
	}
	if delim == 0 {
		peek, _ := br.Peek(64 << 10)
		delim = pipeline.HeaderDelimiter(string(headerLine(peek, isHeader)))
	}
	bound := &csvBoundReader{r: br, line: skipped + 1}
	cr := csv.NewReader(bound)
	cr.Comma = delim
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	parseErrors := 0
	for {
		fields, err := cr.Read()
		bound.recordDone()
		if err == io.EOF {
			return
		}
		if err != nil {
			var le *csvLimitError
			var pe *csv.ParseError
			switch {
			case errors.As(err, &le):
				ps.Errorf(pipeline.Origin{File: file, Row: le.line}, "", "%v; the rest of the file was not read", le)
				return
			case errors.As(err, &pe):
				parseErrors++
				ps.Errorf(pipeline.Origin{File: file, Row: pe.StartLine + skipped}, "", "%s", csvParseMessage(pe, skipped))
				if parseErrors >= maxCSVParseErrors {
					ps.Errorf(pipeline.Origin{File: file}, "", "more than %d malformed lines; the rest of the file was not read", maxCSVParseErrors)
					return
				}
				continue
			}
			ps.Errorf(pipeline.Origin{File: file}, "", "the file cannot be read to the end: %v", err)
			return
		}
		if len(fields) > xlsx.MaxRowCells {
			line, _ := cr.FieldPos(0)
			ps.Errorf(pipeline.Origin{File: file, Row: line + skipped}, "", "the file is oversized or damaged: the line has %d fields, more than the %d columns a table has; the rest of the file was not read", len(fields), xlsx.MaxRowCells)
			return
		}
		line, _ := cr.FieldPos(0)
		if !emit(line+skipped, fields) {
			return
		}
	}
}

// headerLine returns the first of the first templates.FlatHeaderRows lines of head for
// which isHeader is true, else the first line.
func headerLine(head []byte, isHeader func([]byte) bool) []byte {
	lines := bytes.SplitN(head, []byte("\n"), templates.FlatHeaderRows+1)
	if len(lines) > templates.FlatHeaderRows {
		lines = lines[:templates.FlatHeaderRows]
	}
	for _, l := range lines {
		if isHeader(l) {
			return l
		}
	}
	return lines[0]
}
