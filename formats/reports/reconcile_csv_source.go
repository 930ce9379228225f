package reports

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/xuri/excelize/v2"
)

// workbookFromCSV turns a CSV file into a one-sheet workbook, cell for
// cell (line n is row n, field m is column m), so that report cells match
// CSV line and column numbers. Counter fields and ids become numbers;
// everything else stays text, so identifiers keep their leading zeros.
func workbookFromCSV(path string) (*excelize.File, string, error) {
	// The copy is made in memory: only a regular file of a bounded size.
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		return nil, "", errors.New(xlsx.NotRegular(st.Mode()))
	}
	if st.Size() > annotateMaxUncompressed {
		return nil, "", xlsx.LimitErrorf("the file is oversized: %s, more than the %s a copy is made of", xlsx.SizeText(st.Size()), xlsx.SizeText(annotateMaxUncompressed))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(raw) {
		return nil, "", errors.New("the file is not UTF-8 text")
	}
	cr := csv.NewReader(bytes.NewReader(raw))
	cr.Comma = sniffDelimiter(raw)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	f := excelize.NewFile()
	sheet := sheetNameFor(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		f.Close()
		return nil, "", err
	}
	var numeric []bool
	line := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, "", fmt.Errorf("line %d: %w", line+1, err)
		}
		line++
		// csv.Reader skips empty lines; keep row numbers equal to line numbers.
		if pl, _ := cr.FieldPos(0); pl > line {
			line = pl
		}
		if numeric == nil {
			numeric = make([]bool, len(rec))
			for i, h := range rec {
				h = strings.ToLower(strings.TrimSpace(h))
				numeric[i] = pipeline.IsCounterName(h) || h == "plan_id" || h == "year_number"
			}
			if !slices.Contains(numeric, true) {
				numeric = nil // not the header row yet: keep looking
			}
		}
		row := make([]any, len(rec))
		for i, v := range rec {
			row[i] = table.CSVUnsafeField(v)
			if i < len(numeric) && numeric[i] {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					row[i] = n
				}
			}
		}
		cell, _ := excelize.CoordinatesToCellName(1, line)
		// Not the StreamWriter: the copy is annotated cell by cell afterwards.
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			f.Close()
			return nil, "", err
		}
	}
	return f, sheet, nil
}

// sniffDelimiter picks the delimiter of the first line among , ; and tab.
func sniffDelimiter(raw []byte) rune {
	first, _, _ := bufio.NewReader(bytes.NewReader(raw)).ReadLine()
	return pipeline.HeaderDelimiter(string(first))
}

// sheetNameFor makes a valid worksheet name from s.
func sheetNameFor(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '_'
		}
		return r
	}, s)
	s = strings.Trim(s, "'")
	if s == "" {
		s = "Data"
	}
	if utf8.RuneCountInString(s) > 31 {
		s = string([]rune(s)[:31])
	}
	return s
}
