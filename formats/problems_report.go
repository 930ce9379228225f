package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
			Severity: p.Severity.String(), File: p.Origin.File, Location: readPlace(p.Origin), Sheet: p.Origin.Sheet, Cell: p.Origin.Cell,
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
	r := ProblemReport{Plans: len(b.Plans), Errors: b.Problems.Count(pipeline.Error), Warnings: b.Problems.Count(pipeline.Warning)}
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
	return out
}

// WriteProblemReport writes the problems of a batch to path, in the format
// its extension names: .csv, .xlsx or .json.
func WriteProblemReport(path string, b *pipeline.Batch) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return WriteFileAtomic(path, func(w io.Writer) error { return writeProblemsCSV(w, b.Problems) })
	case ".json":
		return WriteFileAtomic(path, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(NewProblemReport(b))
		})
	case ".xlsx":
		return WriteFileAtomic(path, func(w io.Writer) error { return writeProblemsXLSX(w, b.Problems) })
	}
	return fmt.Errorf("report %s: unknown report format %q; use a .csv, .xlsx or .json name", path, filepath.Ext(path))
}

func writeProblemsCSV(w io.Writer, ps pipeline.Problems) error {
	rows := ProblemRows(ps)
	if len(rows) == 0 {
		// gocsv writes no header for an empty slice; the report keeps its
		// header so that tools reading it see the columns.
		_, err := io.WriteString(w, "severity,file,location,sheet,cell,row,line,column,header,value,message,suggestions\n")
		return err
	}
	return gocsv.MarshalCSV(rows, newCSVWriter(w))
}

var reportColumns = []string{"Severity", "File", "Location", "Sheet", "Cell", "Row", "Line", "Column", "Header", "Value", "Message", "Suggestions"}

func writeProblemsXLSX(w io.Writer, ps pipeline.Problems) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Problems"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	if err := templates.SetPrintLayout(f, sheet, templates.PrintSetup{TitleFirst: 1, TitleLast: 1}); err != nil {
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
	red, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true, Color: "9C0006"}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFC7CE"}}})
	amber, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true, Color: "9C5700"}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFEB9C"}}})
	widths := []float64{10, 28, 22, 14, 8, 7, 7, 8, 36, 20, 90, 40}
	for i, wd := range widths {
		if err := sw.SetColWidth(i+1, i+1, wd); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	head := make([]any, len(reportColumns))
	for i, c := range reportColumns {
		head[i] = excelize.Cell{StyleID: bold, Value: c}
	}
	if err := sw.SetRow("A1", head); err != nil {
		return err
	}
	rows := ProblemRows(ps)
	if len(rows) > 0 {
		// A table gives the header row its filter buttons (a filterable
		// sheet) and keeps them when rows are sorted.
		last, _ := excelize.CoordinatesToCellName(len(reportColumns), len(rows)+1)
		showStripes := false
		if err := sw.AddTable(&excelize.Table{Range: "A1:" + last, Name: "Problems",
			StyleName: "TableStyleLight1", ShowRowStripes: &showStripes}); err != nil {
			return err
		}
	}
	for i, r := range rows {
		sev := excelize.Cell{StyleID: amber, Value: r.Severity}
		if r.Severity == pipeline.Error.String() {
			sev.StyleID = red
		}
		row := []any{sev, r.File, r.Location, r.Sheet, r.Cell, reportBlankZero(r.Row), reportBlankZero(r.Line), reportBlankZero(r.Column), r.Header, r.Value, r.Message, r.Suggestions}
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, row); err != nil {
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
func WriteProblemsText(w io.Writer, b *pipeline.Batch) error {
	ew := &reportWriter{w: w}
	for _, file := range reportFiles(b) {
		var mine pipeline.Problems
		for _, p := range b.Problems {
			if p.Origin.File == file {
				mine = append(mine, p)
			}
		}
		if len(mine) == 0 {
			ew.printf("%s: ok\n", file)
			continue
		}
		ew.printf("%s: %s\n", file, reportCountWords(mine.Count(pipeline.Error), mine.Count(pipeline.Warning)))
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
	}
	targets := 0
	for _, p := range b.Plans {
		targets += len(p.Targets)
	}
	plans := pipeline.Plural(len(b.Plans), "plan")
	if n := reportPlansWithErrors(b); n > 0 {
		plans += fmt.Sprintf(" (%d with errors)", n)
	}
	ew.printf("\n%s, %s, %s: %s\n",
		pipeline.Plural(len(b.Files), "file"), plans, pipeline.Plural(targets, "target"),
		reportCountWords(b.Problems.Count(pipeline.Error), b.Problems.Count(pipeline.Warning)))
	return ew.err
}

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
	if place := readPlace(o); place != "" {
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

type reportWriter struct {
	w   io.Writer
	err error
}

func (e *reportWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
