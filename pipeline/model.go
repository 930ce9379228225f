package pipeline

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Origin says where a value came from: a file, and in it a sheet and cell
// (XLSX) or a line and column (CSV). Zero fields are unknown.
//
// An XLSX cell may be given by Sheet, Row and Column without its Cell
// reference (a flat table's reader does not build a string per cell):
// String derives it, and WithCell fills it in for an Origin that is kept.
type Origin struct {
	File   string // path as given on the command line
	Sheet  string // XLSX worksheet name; "" for CSV
	Cell   string // XLSX cell reference such as "F12"; "" for a whole row or sheet
	Row    int    // 1-based XLSX row or CSV line number; 0 when unknown
	Column int    // 1-based column number; 0 for a whole row
	Header string // the column's header text, when known
}

// String formats the origin for messages: "plans.xlsx Targets!F12",
// "plans.xlsx Targets row 12", "plans.csv line 12, column 6 (number_of_...)".
func (o Origin) String() string {
	o = o.WithCell()
	var b strings.Builder
	if o.File != "" {
		b.WriteString(filepath.Base(o.File))
	}
	switch {
	case o.Sheet != "" && o.Cell != "":
		fmt.Fprintf(&b, " %s!%s", o.Sheet, o.Cell)
	case o.Sheet != "" && o.Row > 0:
		fmt.Fprintf(&b, " %s row %d", o.Sheet, o.Row)
	case o.Sheet != "":
		fmt.Fprintf(&b, " sheet %s", o.Sheet)
	case o.Row > 0 && o.Column > 0:
		fmt.Fprintf(&b, " line %d, column %d", o.Row, o.Column)
	case o.Row > 0:
		fmt.Fprintf(&b, " line %d", o.Row)
	}
	if o.Header != "" && o.Column > 0 {
		fmt.Fprintf(&b, " (%s)", o.Header)
	}
	return strings.TrimSpace(b.String())
}

// WithCell returns o with its Cell reference filled in from Column and
// Row when o is an XLSX cell (Sheet, Row and Column known) given without
// one; otherwise o as it is.
func (o Origin) WithCell() Origin {
	if o.Cell == "" && o.Sheet != "" && o.Column > 0 && o.Row > 0 {
		o.Cell = CellRef(o.Column, o.Row)
	}
	return o
}

// cellRef returns the A1-style reference of a 1-based column and row:
// cellRef(6, 12) is "F12".
func CellRef(col, row int) string {
	var buf [24]byte
	b := AppendColumnLetters(buf[:0], col)
	return string(strconv.AppendInt(b, int64(row), 10))
}

// appendColumnLetters appends the letters of a 1-based column number
// (1 is A, 27 is AA).
func AppendColumnLetters(b []byte, col int) []byte {
	var rev [8]byte
	n := 0
	for col > 0 && n < len(rev) {
		col--
		rev[n] = byte('A' + col%26)
		col /= 26
		n++
	}
	for n > 0 {
		n--
		b = append(b, rev[n])
	}
	return b
}

// Ref returns the short location without the file: "Targets!F12" or
// "line 12, column 6".
func (o Origin) Ref() string {
	s := o
	s.File = ""
	s.Header = ""
	return strings.TrimSpace(s.String())
}

// Severity ranks a Problem.
type Severity int

// Severities: a warning is reported and allowed; an error stops the run
// before any write.
const (
	Warning Severity = iota + 1
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// MarshalText implements encoding.TextMarshaler.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Problem is one finding of reading or validation, tied to where it is.
type Problem struct {
	Severity    Severity `json:"severity"`
	Origin      Origin   `json:"origin"`
	Value       string   `json:"value,omitempty"`       // the offending value as found
	Message     string   `json:"message"`               // plain words a consultant understands
	Suggestions []string `json:"suggestions,omitempty"` // closest valid values, when any
	Kind        string   `json:"-"`                     // what kind of problem, in a few words, when the message does not say it alone (see ProblemBound)
	// Code classifies problems the commands act on; "" for most.
	Code string `json:"code,omitempty"`
}

// CodeUnknownCounter marks an error about a counter name the catalog
// read with does not have: a catalog learnt from the service may know it.
const CodeUnknownCounter = "unknown_counter"

// CodeSkippedYears marks the warning that a plan, which may be new, skips
// a financial year inside its dates (skippedYears): diff and apply, which
// know whether it is new, note it themselves for each plan they create.
const CodeSkippedYears = "skipped_years"

// Without returns ps without the problems whose Code is code.
func (ps Problems) Without(code string) Problems {
	out := make(Problems, 0, len(ps))
	for _, p := range ps {
		if p.Code != code {
			out = append(out, p)
		}
	}
	return out
}

// HasUnknownCounters reports whether ps holds an error about a counter
// name the catalog lacks (CodeUnknownCounter).
func (ps Problems) HasUnknownCounters() bool {
	for _, p := range ps {
		if p.Severity == Error && p.Code == CodeUnknownCounter {
			return true
		}
	}
	return false
}

// String formats the problem on one line.
func (p Problem) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s", p.Origin, p.Severity, p.Message)
	if p.Value != "" {
		fmt.Fprintf(&b, " (found %q)", Excerpt(p.Value))
	}
	if len(p.Suggestions) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(QuoteAll(p.Suggestions), " or "))
	}
	return b.String()
}

func QuoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Problems is a list of findings.
type Problems []Problem

// Errorf appends an error at o.
func (ps *Problems) Errorf(o Origin, value, format string, args ...any) {
	*ps = append(*ps, Problem{Severity: Error, Origin: o, Value: Excerpt(value), Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning at o.
func (ps *Problems) Warnf(o Origin, value, format string, args ...any) {
	*ps = append(*ps, Problem{Severity: Warning, Origin: o, Value: Excerpt(value), Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool { return ps.Count(Error) > 0 }

// Count returns how many problems have severity s.
func (ps Problems) Count(s Severity) int {
	n := 0
	for _, p := range ps {
		if p.Severity == s {
			n++
		}
	}
	return n
}

// Sort orders problems by file, sheet, row, column, then errors first.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Origin, ps[j].Origin
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Sheet != b.Sheet {
			return a.Sheet < b.Sheet
		}
		if a.Row != b.Row {
			return a.Row < b.Row
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return ps[i].Severity > ps[j].Severity
	})
}

// CellKind is the kind of value a Cell holds.
type CellKind int

// Cell kinds, as the readers see them.
const (
	CellBlank          CellKind = iota // empty or only spaces
	CellText                           // text, including numbers stored as text and all CSV fields
	CellNumber                         // a numeric cell (or a formula's cached numeric result)
	CellDate                           // a date-formatted numeric cell, already converted with the workbook's date system
	CellBool                           // a boolean cell
	CellError                          // an error value such as #REF! or #DIV/0!
	CellFormulaNoValue                 // a formula with no cached value
)

// Cell is one field of a Record, typed by the reader but not yet validated.
type Cell struct {
	Origin Origin
	Kind   CellKind
	Text   string  // the text as stored (CSV) or as displayed with the cell's number format (XLSX)
	Number float64 // the numeric value of CellNumber and CellDate cells (CellDate: the serial)
	Date   Date    // the date of CellDate cells
	Reason string  // why a CellError cell the reader could not read (#UNREADABLE!) is so, or why a CellFormulaNoValue cell has no result
}

// Record is one row of a flat table, or one grid (plan, year, target type)
// of a grid workbook, as a map from canonical column name to cell. Canonical
// names are the flat table's lower-case header names (plan_name,
// financial_year, number_of_african_male_top_managers, ...). Columns the file
// does not have are absent from Cells.
type Record struct {
	Origin Origin // the row (flat) or the grid block (grid)
	Cells  map[string]Cell
	// Counters are counter cells (columns named number_of_...) a reader
	// gives in a slice rather than in Cells, in column order, so that a
	// row of a wide table costs no map update per counter. A reader that
	// gives Counters puts no counter in Cells (which are then not searched
	// for counters). A reader may reuse the slice
	// for its next record, with the same Name strings in the same places.
	Counters []CounterCell
	// Fixed, when not nil, holds cells of the plan and year columns
	// (RowColumns) a reader gives by their index rather than in Cells,
	// so that a row costs no map update per such cell. A column is in
	// Fixed or in Cells, not both. A reader may reuse it for its next
	// record.
	Fixed *RowCells
}

// RowCells are a record's cells of the RowColumns, by their index there;
// Has tells which the record has.
type RowCells struct {
	Cells [numRowColumns]Cell
	Has   [numRowColumns]bool
}

// numRowColumns is the number of RowColumns.
const numRowColumns = 13

// RowColumns are the plan and year columns of a flat table's row that a
// reader may give in Record.Fixed.
var RowColumns = [numRowColumns]string{ColPlanID, ColAccount, ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber, ColPlanName,
	ColStartDate, ColEndDate, ColSector, ColScorecardID, ColYearNumber, ColFinancialYear, ColTargetType}

// RowColumnIndex returns the index of col in RowColumns, or -1.
func RowColumnIndex(col string) int {
	switch col {
	case ColPlanID:
		return 0
	case ColAccount:
		return 1
	case ColCompanyVAT:
		return 2
	case ColCompanyRegistration:
		return 3
	case ColCompanyIDNumber:
		return 4
	case ColPlanName:
		return 5
	case ColStartDate:
		return 6
	case ColEndDate:
		return 7
	case ColSector:
		return 8
	case ColScorecardID:
		return 9
	case ColYearNumber:
		return 10
	case ColFinancialYear:
		return 11
	case ColTargetType:
		return 12
	}
	return -1
}

// cell returns the record's cell of the column col, from Fixed or Cells.
func (r *Record) Cell(col string) (Cell, bool) {
	if r.Fixed != nil {
		if i := RowColumnIndex(col); i >= 0 && r.Fixed.Has[i] {
			return r.Fixed.Cells[i], true
		}
	}
	c, ok := r.Cells[col]
	return c, ok
}

// CounterCell is one counter cell of a Record: its column's canonical name
// and the cell.
type CounterCell struct {
	Name string
	Cell Cell
}

// CompanyIDs are the identifiers of a client company. Empty means not given.
type CompanyIDs struct {
	VAT          string `json:"vat_number,omitempty"`
	Registration string `json:"registration_number,omitempty"`
	IDNumber     string `json:"id_number,omitempty"`
}

// IsZero reports whether no identifier is given.
func (c CompanyIDs) IsZero() bool { return c == CompanyIDs{} }

// String formats the identifiers given, for messages and plan keys.
func (c CompanyIDs) String() string {
	var parts []string
	if c.VAT != "" {
		parts = append(parts, "VAT "+c.VAT)
	}
	if c.Registration != "" {
		parts = append(parts, "registration "+c.Registration)
	}
	if c.IDNumber != "" {
		parts = append(parts, "ID "+c.IDNumber)
	}
	return strings.Join(parts, ", ")
}

// InputPlan is one plan as the input files describe it, after validation.
// Empty optional fields mean "leave the server's value as it is".
type InputPlan struct {
	Origin  Origin // where the plan is first described
	PlanID  int64  // 0 when the file names no plan id
	Account string // the configured account the file names (column account, grid label Account); "" when not given
	// accountOrigin is the cell that gives Account (zero when not given),
	// so that an account name no configuration has is cited at that cell.
	AccountOrigin Origin `json:"-"`
	Company       CompanyIDs
	Name          string
	StartDate     Date // zero when not given
	EndDate       Date // zero when not given
	Sector        string
	ScorecardID   string
	Targets       []*InputTarget
	// Baseline is the current workforce a file gives beside the targets
	// (form EEA13's workforce profile): by target type, never written nor
	// compared with the service; check reports it as the current
	// workforce.
	Baseline []*InputTarget `json:",omitempty"`

	// companyCell is where the plan's company identifiers belong when the
	// file leaves them blank but shows their place (the value cell beside
	// a grid sheet's "Company VAT number" label): a missing company is
	// reported there. Zero when unknown.
	CompanyCell Origin `json:"-"`

	// fieldPlaces holds where each plan field was read (a grid's
	// labelled metadata cell, a flat row's column), by the index of
	// asmPlanColumns: the cell a report marks (FieldOrigin), without
	// reading the file again. nil when no field was given. A flat row's
	// field points at its column's Origin, shared by the table's rows.
	FieldPlaces *[NumPlanColumns]FieldPlace `json:"-"`

	// rows are the table rows and grid sheets the plan was read from
	// (rejects.go: Rows).
	rows []RowRef
}

// fieldPlace is where a plan field was read: its column's Origin on row
// (onRow), or its own cell; the zero fieldPlace is a field not given.
type FieldPlace struct {
	At    *Origin
	Row   int32
	OnRow bool
}

// origin returns the place as an Origin (the zero Origin when not given).
func (f FieldPlace) Origin() Origin {
	return ReadPlace{At: f.At, OnRow: f.OnRow}.Origin(int(f.Row))
}

// FieldOrigin returns where the plan field col (ColPlanName, ColSector,
// ...) was read, else the plan's origin.
func (p *InputPlan) FieldOrigin(col string) Origin {
	if p.FieldPlaces != nil {
		for i, c := range PlanColumns {
			if c == col && p.FieldPlaces[i].At != nil {
				return p.FieldPlaces[i].Origin()
			}
		}
	}
	return p.Origin
}

// PlanKey identifies a plan across runs: its id when the file gives one,
// else the company, the name and the start date.
type PlanKey struct {
	PlanID    int64
	Account   string
	Company   CompanyIDs
	Name      string
	StartDate Date
}

// Key returns the plan's key.
func (p *InputPlan) Key() PlanKey {
	if p.PlanID != 0 {
		return PlanKey{PlanID: p.PlanID}
	}
	return PlanKey{Account: p.Account, Company: p.Company, Name: p.Name, StartDate: p.StartDate}
}

// String formats the key for messages.
func (k PlanKey) String() string {
	if k.PlanID != 0 {
		return fmt.Sprintf("plan %d", k.PlanID)
	}
	s := fmt.Sprintf("plan %q starting %s", k.Name, k.StartDate)
	if !k.Company.IsZero() {
		s += " of company " + k.Company.String()
	}
	if k.Account != "" {
		s += " of account " + k.Account
	}
	return s
}

// InputTarget is one (financial year, target type) of an InputPlan. The year
// is given as a year number, a financial year, or both.
type InputTarget struct {
	Origin        Origin
	YearNumber    int           // 1-based; 0 when only FinancialYear is given
	FinancialYear FinancialYear // 0 when only YearNumber is given
	TargetType    string
	Counters      Counters          // only the counters the file sets; blank means leave as is
	Cells         map[string]Origin // where counters were read, when not given by Columns or Places
	Columns       CounterColumns    // shared by the rows of one flat table: each counter's column
	// Places are where counters were read off the target's row on the
	// sheet of Origin (its File and Sheet), as grid cells are. A grid
	// target of 90 counters keeps 720 bytes of them instead of 90 Origins
	// in a map (about 15 KB), so that a grid workbook of thousands of
	// plans is held in little memory.
	Places *CellPlaces `json:"-"` // (CellOf gives them)
}

// CellPlaces are the cells of a sheet counters were read from, one per
// counter of a catalog, by index; each cell's Origin is headed by its
// counter's name.
type CellPlaces struct {
	Cat *Catalog
	At  []CellPlace // the zero cellPlace for none
}

// cellPlace is a cell of a sheet by its 1-based row and column.
type CellPlace struct{ Row, Column int32 }

// of returns the cell the counter name was read from, if any.
func (p *CellPlaces) of(name string) (CellPlace, bool) {
	if p == nil {
		return CellPlace{}, false
	}
	if i := p.Cat.IndexOf(name); i >= 0 && i < len(p.At) && p.At[i].Row > 0 {
		return p.At[i], true
	}
	return CellPlace{}, false
}

// CounterColumns maps counter names to the column they are read from in a
// flat table, as an Origin without a row (Cell holds the column letters).
// The rows of one table share one map, so a large file does not carry an
// Origin per value.
type CounterColumns map[string]Origin

// CellOf returns where the counter name was read: from Cells, else from
// Places, else from Columns on the target's row. The zero Origin means
// unknown.
func (t *InputTarget) CellOf(name string) Origin {
	if o, ok := t.Cells[name]; ok {
		return o
	}
	if p, ok := t.Places.of(name); ok {
		return Origin{File: t.Origin.File, Sheet: t.Origin.Sheet, Row: int(p.Row), Column: int(p.Column), Header: name}.WithCell()
	}
	o, ok := t.Columns[name]
	if !ok {
		return Origin{}
	}
	o.Row = t.Origin.Row
	if o.Cell != "" && o.Row > 0 {
		o.Cell += strconv.Itoa(o.Row)
	}
	return o.WithCell()
}

// Year resolves the target's year number for a plan starting at start.
// ok is false when the year cannot be resolved (no start date and only a
// financial year given, or the two disagree).
func (t *InputTarget) Year(start Date) (n int, ok bool) {
	if t.FinancialYear != 0 && !start.IsZero() {
		n = int(t.FinancialYear-FinancialYearOf(start)) + 1
		if t.YearNumber != 0 && t.YearNumber != n {
			return 0, false
		}
		return n, n >= 1
	}
	return t.YearNumber, t.YearNumber >= 1
}

// Batch is what reading one or more input files yields: the plans and every
// problem found, errors and warnings.
type Batch struct {
	Files    []string
	Plans    []*InputPlan
	Problems Problems
	Omitted  []Omitted // problems counted but not kept in Problems (see ProblemBound)
	// UnplacedSheets and UnplacedRows count the grid sheets and table rows
	// in no plan, because their plan key has an error (Assembler.Unplaced).
	UnplacedSheets, UnplacedRows int
}

// Count returns how many problems of severity s the inputs have: those
// kept and those set aside.
func (b *Batch) Count(s Severity) int { return b.Problems.Count(s) + OmittedCount(b.Omitted, s) }

// dedupe drops problems identical to the one before (Sort first): a grid
// workbook repeats its plan cells in every grid, and one bad cell is one problem.
func (ps Problems) Dedupe() Problems {
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && problemEqual(ps[i-1], p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func problemEqual(a, b Problem) bool {
	return a.Severity == b.Severity && a.Origin == b.Origin && a.Value == b.Value && a.Message == b.Message && strings.Join(a.Suggestions, "\x00") == strings.Join(b.Suggestions, "\x00")
}

// RowRef names where input was read: a row of a flat table (Row > 0, its
// line in a CSV file) or a whole grid sheet (Row 0) of a file.
type RowRef struct {
	File, Sheet string
	Row         int
}

// addRow records that the plan was read from the record at o: a table row,
// or a grid sheet (a grid record's origin is a cell of its sheet).
func (p *InputPlan) AddRow(o Origin) {
	r := RowRef{File: o.File, Sheet: o.Sheet, Row: o.Row}
	if o.Cell != "" {
		r.Row = 0
	}
	if n := len(p.rows); n > 0 && p.rows[n-1] == r {
		return // a grid sheet's records, one after another
	}
	p.rows = append(p.rows, r)
}

// Rows returns the table rows and grid sheets the plan was read from, in
// the order read.
func (p *InputPlan) Rows() []RowRef { return p.rows }

// ReadPlace is where a year cell of a target was read, kept until Finish
// without an Origin per row: a cell on the target's own row (a flat
// table's) points at its column's Origin, shared by the rows of the table.
type ReadPlace struct {
	At    *Origin // the column (onRow) or the cell; nil when not given
	OnRow bool
	Raw   string // the cell's text
}

// origin returns the place's Origin for a target read at row.
func (p ReadPlace) Origin(row int) Origin {
	if p.At == nil {
		return Origin{}
	}
	o := *p.At
	if p.OnRow {
		o.Row = row
		if o.Cell != "" {
			o.Cell += strconv.Itoa(row)
		}
		o = o.WithCell()
	}
	return o
}

// Omitted counts the problems of one kind that were not kept.
type Omitted struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Kind     string   `json:"kind"`  // what they are, in a few words
	Count    int      `json:"count"` // how many were set aside
}

// OmittedCount returns how many problems of severity s were set aside.
func OmittedCount(os []Omitted, s Severity) int {
	n := 0
	for _, o := range os {
		if o.Severity == s {
			n += o.Count
		}
	}
	return n
}
