package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
	"github.com/gocarina/gocsv"
	"github.com/xuri/excelize/v2"
)

// ProblemRow is one problem as the report files write it: the origin spread
// into plain columns.
type ProblemRow struct {
	Severity    string `csv:"severity" json:"severity"`
	File        string `csv:"file" json:"file"`
	Location    string `csv:"location" json:"location,omitempty"` // "Targets!F12", "Targets row 3", "line 4, column 2"
	Sheet       string `csv:"sheet" json:"sheet,omitempty"`
	Cell        string `csv:"cell" json:"cell,omitempty"`
	Row         int    `csv:"row" json:"row,omitempty"`   // XLSX row
	Line        int    `csv:"line" json:"line,omitempty"` // CSV line
	Column      int    `csv:"column" json:"column,omitempty"`
	Header      string `csv:"header" json:"header,omitempty"`
	Value       string `csv:"value" json:"value,omitempty"`
	Message     string `csv:"message" json:"message"`
	Suggestions string `csv:"suggestions" json:"-"`

	SuggestionList []string `csv:"-" json:"suggestions,omitempty"`
}

// ProblemRows converts problems to report rows, in the problems' order.
func ProblemRows(ps pipeline.Problems) []ProblemRow {
	rows := make([]ProblemRow, 0, len(ps))
	for _, p := range ps {
		r := ProblemRow{
			Severity: p.Severity.String(), File: p.Origin.File, Location: table.Place(p.Origin), Sheet: p.Origin.Sheet, Cell: p.Origin.Cell,
			Column: p.Origin.Column, Header: p.Origin.Header, Value: pipeline.Excerpt(p.Value), Message: p.Message,
			Suggestions: strings.Join(p.Suggestions, "; "), SuggestionList: p.Suggestions,
		}
		if p.Origin.Sheet != "" {
			r.Row = p.Origin.Row
		} else {
			r.Line = p.Origin.Row
		}
		rows = append(rows, r)
	}
	return rows
}

// ProblemReport is the JSON report of a validation run.
type ProblemReport struct {
	Files    []FileSummary `json:"files"`
	Plans    int           `json:"plans"`
	Targets  int           `json:"targets"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Problems []ProblemRow  `json:"problems"`
}

// FileSummary counts the problems of one file.
type FileSummary struct {
	File     string `json:"file"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
}

// NewProblemReport summarises a batch.
func NewProblemReport(b *pipeline.Batch) ProblemReport {
	r := ProblemReport{Plans: len(b.Plans), Errors: b.Count(pipeline.Error), Warnings: b.Count(pipeline.Warning)}
	for _, p := range b.Plans {
		r.Targets += len(p.Targets)
	}
	for _, f := range reportFiles(b) {
		s := FileSummary{File: f}
		for _, p := range b.Problems {
			if p.Origin.File != f {
				continue
			}
			if p.Severity == pipeline.Error {
				s.Errors++
			} else {
				s.Warnings++
			}
		}
		for _, o := range b.Omitted {
			if o.File != f {
				continue
			}
			if o.Severity == pipeline.Error {
				s.Errors += o.Count
			} else {
				s.Warnings += o.Count
			}
		}
		r.Files = append(r.Files, s)
	}
	r.Problems = ProblemRows(b.Problems)
	return r
}

// reportFiles lists the batch's files, then any other file a problem names
// (a path that does not exist), in order.
func reportFiles(b *pipeline.Batch) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range b.Files {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, p := range b.Problems {
		if f := p.Origin.File; !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, o := range b.Omitted {
		if !seen[o.File] {
			seen[o.File] = true
			out = append(out, o.File)
		}
	}
	return out
}

// WriteProblemReport writes the problems of a batch to path, in the format
// its extension names: .csv, .xlsx or .json. The problems set aside while
// reading (see ReadOptions.Bound) are in rest, when given: they are
// streamed from it after the problems kept, so the report lists every
// problem.
func WriteProblemReport(path string, b *pipeline.Batch, rest ...*ProblemSpill) error {
	var spill *ProblemSpill
	if len(rest) > 0 {
		spill = rest[0]
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return writeProblemsCSV(w, b.Problems, spill) })
	case ".json":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return EncodeProblemReportJSON(w, b, spill) })
	case ".xlsx":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return writeProblemsXLSX(w, b.Problems, spill) })
	}
	return fmt.Errorf("report %s: unknown report format %q; use a .csv, .xlsx or .json name", path, filepath.Ext(path))
}

func writeProblemsCSV(w io.Writer, ps pipeline.Problems, spill *ProblemSpill) error {
	rows := ProblemRows(ps)
	csvw := table.NewCSVWriter(w) // fields neutralised against formula injection
	if len(rows) == 0 {
		// gocsv writes no header for an empty slice; the report keeps its
		// header so that tools reading it see the columns.
		if _, err := io.WriteString(w, "severity,file,location,sheet,cell,row,line,column,header,value,message,suggestions\n"); err != nil {
			return err
		}
	} else if err := gocsv.MarshalCSV(rows, csvw); err != nil {
		return err
	}
	if err := reportEachChunk(spill, func(rows []ProblemRow) error { return gocsv.MarshalCSVWithoutHeaders(rows, csvw) }); err != nil {
		return err
	}
	csvw.Flush()
	return csvw.Error()
}

// reportEachChunk passes the spilled problems to fn as rows, a thousand at
// a time.
func reportEachChunk(spill *ProblemSpill, fn func([]ProblemRow) error) error {
	if spill.Len() == 0 {
		return nil
	}
	chunk := make(pipeline.Problems, 0, 1024)
	err := spill.Each(func(p pipeline.Problem) error {
		chunk = append(chunk, p)
		if len(chunk) == cap(chunk) {
			err := fn(ProblemRows(chunk))
			chunk = chunk[:0]
			return err
		}
		return nil
	})
	if err == nil && len(chunk) > 0 {
		err = fn(ProblemRows(chunk))
	}
	return err
}

// EncodeProblemReportJSON writes the JSON problem report to w (to a .json
// --report file, or validate --json's stdout); the problems array is
// streamed, one problem at a time, those in spill (may be nil) after b's.
func EncodeProblemReportJSON(w io.Writer, b *pipeline.Batch, spill *ProblemSpill) error {
	r := NewProblemReport(b)
	if spill.Len() == 0 {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	rows := r.Problems
	r.Problems = []ProblemRow{}
	head, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	head = bytes.TrimSuffix(head, []byte("[]\n}"))
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	bw.WriteString("[")
	first := true
	write := func(rows []ProblemRow) error {
		for _, row := range rows {
			if !first {
				bw.WriteString(",")
			}
			first = false
			bw.WriteString("\n    ")
			j, err := json.MarshalIndent(row, "    ", "  ")
			if err != nil {
				return err
			}
			if _, err := bw.Write(j); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(rows); err != nil {
		return err
	}
	if err := reportEachChunk(spill, write); err != nil {
		return err
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}

var reportColumns = []string{"Severity", "File", "Location", "Sheet", "Cell", "Row", "Line", "Column", "Header", "Value", "Message", "Suggestions"}

func writeProblemsXLSX(w io.Writer, ps pipeline.Problems, spill *ProblemSpill) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Problems"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	if err := templates.SetPrintLayout(f, sheet, templates.WidePrint(3)); err != nil { // severity, file, location on every page
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	red, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true, Color: templates.BadText}, Fill: templates.SolidFill(templates.BadFill)})
	amber, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true, Color: templates.WarnText}, Fill: templates.SolidFill(templates.WarnFill)})
	if err := streamHeaderRow(sw, []float64{10, 28, 22, 14, 8, 7, 7, 8, 36, 20, 90, 40}, reportColumns, bold); err != nil {
		return err
	}
	rows := ProblemRows(ps)
	// A sheet holds 1,048,576 rows: the header, the problems, and a last
	// row saying how many more a full sheet left out.
	const maxRows = excelize.TotalRows - 2
	total := len(rows) + spill.Len()
	listed := min(total, maxRows)
	if listed > 0 {
		// A table gives the header row its filter buttons (a filterable
		// sheet) and keeps them when rows are sorted.
		last, _ := excelize.CoordinatesToCellName(len(reportColumns), listed+1)
		showStripes := false
		if err := sw.AddTable(&excelize.Table{Range: "A1:" + last, Name: "Problems",
			StyleName: "TableStyleLight1", ShowRowStripes: &showStripes}); err != nil {
			return err
		}
	}
	i := 0
	write := func(rows []ProblemRow) error {
		for _, r := range rows {
			if i >= listed {
				return nil
			}
			sev := excelize.Cell{StyleID: amber, Value: r.Severity}
			if r.Severity == pipeline.Error.String() {
				sev.StyleID = red
			}
			row := []any{sev, r.File, r.Location, r.Sheet, r.Cell, reportBlankZero(r.Row), reportBlankZero(r.Line), reportBlankZero(r.Column), r.Header, r.Value, r.Message, r.Suggestions}
			cell, _ := excelize.CoordinatesToCellName(1, i+2)
			if err := sw.SetRow(cell, row); err != nil {
				return err
			}
			i++
		}
		return nil
	}
	if err := write(rows); err != nil {
		return err
	}
	if err := reportEachChunk(spill, write); err != nil {
		return err
	}
	if total > listed {
		cell, _ := excelize.CoordinatesToCellName(1, listed+2)
		if err := sw.SetRow(cell, []any{nil, fmt.Sprintf("%s more problems: a sheet holds no more rows; write the report as .csv or .json for the full list", thousands(total-listed))}); err != nil {
			return err
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return f.Write(w)
}

func reportBlankZero(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// WriteProblemsText writes a readable report of a batch: the problems
// grouped by file and sheet, each with its place, severity, message, the
// value found and suggestions, then counts.
//
// Problems set aside while reading (Batch.Omitted) are counted after each
// file's list, by kind, errors first: "… and 55,643 more warnings:
// disabled above all employees".
func WriteProblemsText(w io.Writer, b *pipeline.Batch) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	ew := &reportWriter{w: bw}
	defer bw.Flush()
	for _, file := range reportFiles(b) {
		var mine pipeline.Problems
		for _, p := range b.Problems {
			if p.Origin.File == file {
				mine = append(mine, p)
			}
		}
		var omitted []pipeline.Omitted
		for _, o := range b.Omitted {
			if o.File == file {
				omitted = append(omitted, o)
			}
		}
		if len(mine) == 0 && len(omitted) == 0 {
			ew.printf("%s: ok\n", file)
			continue
		}
		ew.printf("%s: %s\n", file, reportCountWords(mine.Count(pipeline.Error)+pipeline.OmittedCount(omitted, pipeline.Error),
			mine.Count(pipeline.Warning)+pipeline.OmittedCount(omitted, pipeline.Warning)))
		sheet := "\x00"
		for _, p := range mine {
			if p.Origin.Sheet != sheet {
				sheet = p.Origin.Sheet
				if sheet != "" {
					ew.printf("  sheet %s\n", sheet)
				}
			}
			ew.printf("    %s\n", reportProblemLine(p))
		}
		for _, o := range omitted {
			ew.printf("  … and %s more %s%s: %s\n", thousands(o.Count), o.Severity, map[bool]string{true: "", false: "s"}[o.Count == 1], o.Kind)
		}
	}
	targets := 0
	for _, p := range b.Plans {
		targets += len(p.Targets)
	}
	plans := pipeline.Plural(len(b.Plans), "plan")
	var notes []string
	if n := reportPlansWithErrors(b); n > 0 {
		if pipeline.OmittedCount(b.Omitted, pipeline.Error) > 0 {
			// Counted from the errors listed: some were not.
			notes = append(notes, fmt.Sprintf("%d or more with errors", n))
		} else {
			notes = append(notes, fmt.Sprintf("%d with errors", n))
		}
	}
	// Sheets and rows whose plan cannot be told until their errors are fixed.
	var unplaced []string
	if n := b.UnplacedSheets; n > 0 {
		unplaced = append(unplaced, pipeline.Plural(n, "plan sheet"))
	}
	if n := b.UnplacedRows; n > 0 {
		unplaced = append(unplaced, pipeline.Plural(n, "row"))
	}
	switch n := b.UnplacedSheets + b.UnplacedRows; {
	case n == 1:
		notes = append(notes, unplaced[0]+" is in no plan yet: fix its plan_id, plan_name or start_date")
	case n > 1:
		notes = append(notes, strings.Join(unplaced, " and ")+" are in no plan yet: fix their plan_id, plan_name or start_date")
	}
	if len(notes) > 0 {
		plans += " (" + strings.Join(notes, "; ") + ")"
	}
	ew.printf("\n%s, %s, %s: %s\n",
		pipeline.Plural(len(b.Files), "file"), plans, pipeline.Plural(targets, "target"),
		reportCountWords(b.Count(pipeline.Error), b.Count(pipeline.Warning)))
	if ew.err == nil {
		ew.err = bw.Flush()
	}
	return ew.err
}

// PlansWithErrors counts the plans of b that have at least one error (the
// "(2 with errors)" of the summary).
func PlansWithErrors(b *pipeline.Batch) int { return reportPlansWithErrors(b) }

// reportPlansWithErrors counts the plans an error belongs to: an error on
// one of the plan's rows (flat, long) or on its grid sheet.
func reportPlansWithErrors(b *pipeline.Batch) int {
	type place struct {
		file, sheet string
		row         int
	}
	errs := map[place]bool{}
	for _, p := range b.Problems {
		if p.Severity != pipeline.Error {
			continue
		}
		errs[place{p.Origin.File, p.Origin.Sheet, p.Origin.Row}] = true
		errs[place{p.Origin.File, p.Origin.Sheet, -1}] = true // the sheet, for grid plans
	}
	if len(errs) == 0 {
		return 0
	}
	n := 0
	for _, pl := range b.Plans {
		hit := errs[place{pl.Origin.File, pl.Origin.Sheet, pl.Origin.Row}]
		if !hit && pl.Origin.Sheet != "" && pl.Origin.Cell != "" {
			hit = errs[place{pl.Origin.File, pl.Origin.Sheet, -1}] // a grid plan owns its sheet
		}
		for _, t := range pl.Targets {
			if hit {
				break
			}
			hit = errs[place{t.Origin.File, t.Origin.Sheet, t.Origin.Row}]
		}
		if hit {
			n++
		}
	}
	return n
}

// reportProblemLine formats one problem without its file: place, severity,
// message, value found, suggestions.
func reportProblemLine(p pipeline.Problem) string {
	var b strings.Builder
	o := p.Origin
	if place := table.Place(o); place != "" {
		b.WriteString(place)
	} else {
		b.WriteString("file")
	}
	if o.Header != "" && o.Column > 0 {
		fmt.Fprintf(&b, " (%s)", o.Header)
	}
	fmt.Fprintf(&b, ": %s: %s", p.Severity, p.Message)
	if p.Value != "" {
		fmt.Fprintf(&b, " [found %q]", pipeline.Excerpt(p.Value))
	}
	if len(p.Suggestions) > 0 {
		q := make([]string, len(p.Suggestions))
		for i, s := range p.Suggestions {
			q[i] = fmt.Sprintf("%q", s)
		}
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(q, " or "))
	}
	return b.String()
}

func reportCountWords(errs, warns int) string {
	if errs == 0 && warns == 0 {
		return "no problems"
	}
	return pipeline.Plural(errs, "error") + ", " + pipeline.Plural(warns, "warning")
}

// thousands writes n with thousands separators: 55,643.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

type reportWriter struct {
	w   io.Writer
	err error
}

func (e *reportWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// streamHeaderRow sets the column widths of a streamed report sheet,
// freezes its first row and writes there the column names in style bold:
// the head the problems and the run report sheets share.
func streamHeaderRow(sw *excelize.StreamWriter, widths []float64, columns []string, bold int) error {
	for i, wd := range widths {
		if err := sw.SetColWidth(i+1, i+1, wd); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	head := make([]any, len(columns))
	for i, c := range columns {
		head[i] = excelize.Cell{StyleID: bold, Value: c}
	}
	return sw.SetRow("A1", head)
}
