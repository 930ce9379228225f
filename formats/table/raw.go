package table

import (
	"encoding/csv"
	"errors"
	"io"
	"os"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// RawTable is a flat table's header and rows as text, as a file holds
// them: what apply --skip-invalid hands back (docs/apply-and-state.md,
// "Skipping invalid plans"). Header is the header row's texts and Names
// their canonical names ("" for a column eepipe does not read); Rows maps
// each row's line (CSV) or row number (XLSX) to its fields.
type RawTable struct {
	HeaderRow int
	Header    []string
	Names     []string
	Long      bool // a long table (target_type, counter and value columns)
	Rows      map[int][]string
}

// ReadRawCSV reads the CSV file path as ReadCSV does (byte-order mark,
// UTF-16, the delimiter, a "sep=" line, lone CR line ends) and returns its
// header (the first of the first templates.FlatHeaderRows records with a target_type
// column) and the fields of the rows wanted (by the line they start on),
// each field as ReadCSV reads its text (CSVUnsafeField).
func ReadRawCSV(path string, cat *pipeline.Catalog, words *mapping.File, want map[int]bool) (*RawTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ps pipeline.Problems
	br, delim, skipped, ok := csvOpen(path, f, &ps)
	if !ok {
		return nil, errors.New("the file cannot be read as CSV")
	}
	bound := &csvBoundReader{r: br, line: skipped + 1}
	cr := csv.NewReader(bound)
	cr.Comma, cr.FieldsPerRecord = delim, -1
	t := &RawTable{Rows: map[int][]string{}}
	for records := 0; ; records++ {
		fields, err := cr.Read()
		bound.recordDone()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				continue // a malformed line: ReadCSV reported it
			}
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		line += skipped
		if t.Header == nil {
			if records >= templates.FlatHeaderRows {
				return nil, errors.New("no header row")
			}
			if csvIsHeaderRow(fields) {
				t.HeaderRow, t.Header = line, unsafeFields(fields)
				t.Names, t.Long = ColumnNames(t.Header, cat, words), isLongHeader(fields)
			}
			continue
		}
		if want[line] {
			t.Rows[line] = unsafeFields(fields)
		}
	}
	if t.Header == nil {
		return nil, errors.New("no header row")
	}
	return t, nil
}

// unsafeFields returns the fields as ReadCSV reads their text.
func unsafeFields(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = CSVUnsafeField(f)
	}
	return out
}

// ColumnNames returns the canonical name of each header text, as a flat
// table's header reads it ("" for a column it does not read: unknown, or
// named twice after its first).
func ColumnNames(header []string, cat *pipeline.Catalog, words *mapping.File) []string {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	cells := make([]flatHeaderCell, len(header))
	for i, h := range header {
		cells[i] = flatHeaderCell{col: i + 1, text: h}
	}
	var ps pipeline.Problems
	h := buildFlatHeader(cells, cat, words, &ps)
	out := make([]string, len(header))
	for i := range header {
		out[i], _ = h.name(i + 1)
	}
	return out
}
