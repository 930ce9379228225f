package sector

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"io"
	"strconv"
	"strings"
)

// The sectoral numerical targets: the figures (embedded, or a --targets
// file), their file format and its parser, and the lookup of a sector's
// figures at a level. The check that measures plans against them is in
// check.go.

// SectorNotice names the notice the sectoral numerical targets come from.
const SectorNotice = "GN 6124, Government Gazette 52514, 15 April 2025"

// SectorCaveat is said wherever the sector figures are shown: the embedded
// figures were transcribed by public sources and not all checked against
// the gazette.
const SectorCaveat = "The figures should be checked against the gazette before they are relied on; a corrected file can be given with --targets."

// EmbeddedSectorTargetsSource is the source name of the embedded figures.
const EmbeddedSectorTargetsSource = "embedded copy of sector-targets-2025.csv"

// disabilityTarget is the share of the whole workforce that should be
// people with disabilities, in every sector: 3%.
const disabilityTarget = Pct(300)

// SectorLevels are the four occupational levels that have sector targets,
// from the top down. Semi-skilled and unskilled levels have none.
var SectorLevels = pipeline.OccupationalLevels[:4]

//go:embed sector-targets-2025.csv
var embeddedSectorTargets []byte

// Pct is a percentage in hundredths of a percent: 18.6% is Pct(1860). It
// keeps the targets exact so that comparisons need no floating point.
type Pct int64

// parsePct parses a percentage such as "18.6", "18,6", "18.60 %" or "3".
// It must be between 0 and 100 with at most two decimals.
func parsePct(s string) (Pct, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	if t == "" {
		return 0, errors.New("the percentage is blank")
	}
	if !strings.Contains(t, ".") {
		t = strings.Replace(t, ",", ".", 1)
	}
	whole, frac, hasDot := strings.Cut(t, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, fmt.Errorf("%q is not a percentage (write it like 18.6)", s)
	}
	if !allDigits(whole) || !allDigits(frac) {
		if strings.HasPrefix(t, "-") {
			return 0, fmt.Errorf("%q is negative; a percentage is between 0 and 100", s)
		}
		return 0, fmt.Errorf("%q is not a percentage (write it like 18.6)", s)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 2 {
		return 0, fmt.Errorf("%q has more than two decimals", s)
	}
	if len(whole) > 3 {
		return 0, fmt.Errorf("%q is more than 100%%", s)
	}
	w, _ := strconv.Atoi("0" + whole)
	f, _ := strconv.Atoi((frac + "00")[:2])
	p := Pct(w*100 + f)
	if p > 10000 {
		return 0, fmt.Errorf("%q is more than 100%%", s)
	}
	return p, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats the percentage without trailing zeros: "18.6", "3", "49.85".
func (p Pct) String() string {
	s := strconv.FormatInt(int64(p)/100, 10)
	if f := int64(p) % 100; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%02d", f), "0")
	}
	return s
}

// Float returns the percentage as a float64 (18.6 for 18.6%).
func (p Pct) Float() float64 { return float64(p) / 100 }

// MarshalJSON writes the percentage as a JSON number: 18.6.
func (p Pct) MarshalJSON() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalJSON reads a JSON number or string percentage.
func (p *Pct) UnmarshalJSON(b []byte) error {
	v, err := parsePct(strings.Trim(string(b), `"`))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// sectorTarget is the pair of figures of one sector at one level: the
// shares of the level's headcount that should be designated-group males and
// designated-group females by the end of the plan.
type sectorTarget struct {
	Sector string `json:"sector"`
	Level  string `json:"level"`
	Male   Pct    `json:"designated_male_pct"`
	Female Pct    `json:"designated_female_pct"`
	line   int    // line of the targets file, 0 when unknown
}

// SectorTargets are the sectoral numerical targets, by sector and level,
// and the file they came from.
type SectorTargets struct {
	source string // EmbeddedSectorTargetsSource or the path of a --targets file
	rows   []sectorTarget
	index  map[string]map[string]int
}

// DefaultSectorTargets returns the embedded 2025 sectoral targets.
func DefaultSectorTargets() *SectorTargets {
	t, err := parseSectorTargets(strings.NewReader(string(embeddedSectorTargets)), EmbeddedSectorTargetsSource)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return t
}

// LoadSectorTargets reads a targets file (see parseSectorTargets); its path
// becomes the Source.
func LoadSectorTargets(path string) (*SectorTargets, error) {
	f, err := pipeline.OpenSmallFile(path)
	if err != nil {
		return nil, fmt.Errorf("sector targets: %w", err)
	}
	defer f.Close()
	return parseSectorTargets(f, path)
}

// Sector target file columns.
const (
	colSector = "sector"
	colLevel  = "level"
	colMale   = "designated_male_pct"
	colFemale = "designated_female_pct"
)

// maxTargetProblems is how many problems of a targets file are reported
// before reading stops.
const maxTargetProblems = 25

// sectorTargetsError lists every problem of a targets file, each with its
// line and column.
type sectorTargetsError struct {
	source   string
	problems []string
}

func (e *sectorTargetsError) Error() string {
	head := fmt.Sprintf("sector targets file %s", e.source)
	if len(e.problems) == 1 {
		return head + ": " + e.problems[0]
	}
	return fmt.Sprintf("%s: %s:\n  %s", head, pipeline.Plural(len(e.problems), "problem"), strings.Join(e.problems, "\n  "))
}

// parseSectorTargets reads sector targets as CSV with a header row naming
// the columns sector, level, designated_male_pct and designated_female_pct
// (any order, any case; other columns are ignored). The delimiter is found
// from the header line among comma, semicolon and tab; lines starting with
// # are comments. Sectors are the service's sector values (matched without
// regard to case); levels are counter level names (top_managers,
// senior_managers, middle_managers, junior_managers) or the gazette's level
// names; percentages are 0-100 with at most two decimals. Every problem is
// reported, each with its line, as a *sectorTargetsError.
func parseSectorTargets(r io.Reader, source string) (*SectorTargets, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sector targets file %s: %w", source, err)
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	fail := &sectorTargetsError{source: source}

	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma = detectDelimiter(text)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false

	cols, ok := readSectorHeader(cr, fail)
	if !ok {
		return nil, fail
	}
	t := &SectorTargets{source: source, index: map[string]map[string]int{}}
	for len(fail.problems) < maxTargetProblems {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail.addf("%s", csvErrorText(err))
			var pe *csv.ParseError
			if errors.As(err, &pe) && pe.Err != csv.ErrFieldCount {
				break // the rest of the file cannot be read reliably
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		if isBlankRecord(rec) {
			continue
		}
		if row, ok := parseSectorRow(rec, line, cols, fail); ok {
			t.Add(row, fail)
		}
	}
	if len(fail.problems) >= maxTargetProblems {
		fail.addf("further lines not checked after %d problems", maxTargetProblems)
	}
	if len(fail.problems) > 0 {
		return nil, fail
	}
	if len(t.rows) == 0 {
		fail.addf("the file has a header row but no targets")
		return nil, fail
	}
	return t, nil
}

// addf adds a problem to e.
func (e *sectorTargetsError) addf(format string, args ...any) {
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
}

// readSectorHeader reads the header row and returns the index of each
// column by its name (lower case). It reports false, with the problem in
// fail, when the file is empty or a required column is missing.
func readSectorHeader(cr *csv.Reader, fail *sectorTargetsError) (map[string]int, bool) {
	header, err := cr.Read()
	if err == io.EOF {
		fail.addf("the file is empty (expected a header row: %s,%s,%s,%s)", colSector, colLevel, colMale, colFemale)
		return nil, false
	}
	if err != nil {
		fail.addf("%s", csvErrorText(err))
		return nil, false
	}
	headerLine, _ := cr.FieldPos(0)
	cols := map[string]int{}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		if _, dup := cols[name]; dup && name != "" {
			fail.addf("line %d: column %q appears twice", headerLine, strings.TrimSpace(h))
			continue
		}
		cols[name] = i
	}
	var missing []string
	for _, c := range []string{colSector, colLevel, colMale, colFemale} {
		if _, ok := cols[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		fail.addf("line %d: the header row has no %s column (found %s; expected %s,%s,%s,%s)", headerLine,
			strings.Join(missing, ", "), quoteJoin(header), colSector, colLevel, colMale, colFemale)
		return nil, false
	}
	return cols, true
}

// parseSectorRow reads one line of targets (rec, at line, with the
// columns cols). It reports false, with the problems in fail, when a
// value is not valid.
func parseSectorRow(rec []string, line int, cols map[string]int, fail *sectorTargetsError) (sectorTarget, bool) {
	field := func(col string) string {
		if i := cols[col]; i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	at := func(col string) string {
		return fmt.Sprintf("line %d, column %d (%s)", line, cols[col]+1, col)
	}
	row := sectorTarget{line: line}
	ok := true
	rawSector := field(colSector)
	if s, found := canonicalSector(rawSector); found {
		row.Sector = s
	} else {
		ok = false
		if rawSector == "" {
			fail.addf("%s: the sector is blank", at(colSector))
		} else if sugg := pipeline.Closest(rawSector, pipeline.Sectors, 2); len(sugg) > 0 {
			fail.addf("%s: %q is not a sector of the service; did you mean %s?", at(colSector), rawSector, strings.Join(pipeline.QuoteAll(sugg), " or "))
		} else {
			fail.addf("%s: %q is not a sector of the service (the sectors are the service's sector values, such as %q)", at(colSector), rawSector, pipeline.Sectors[0])
		}
	}
	rawLevel := field(colLevel)
	if l, msg := canonicalSectorLevel(rawLevel); msg == "" {
		row.Level = l
	} else {
		ok = false
		fail.addf("%s: %s", at(colLevel), msg)
	}
	for _, c := range []struct {
		col string
		dst *Pct
	}{{colMale, &row.Male}, {colFemale, &row.Female}} {
		v, err := parsePct(field(c.col))
		if err != nil {
			ok = false
			fail.addf("%s: %v", at(c.col), err)
			continue
		}
		*c.dst = v
	}
	if !ok {
		return row, false
	}
	if row.Male+row.Female > 10000 {
		fail.addf("line %d: the two figures add up to %s%%, more than 100%%", line, (row.Male + row.Female).String())
		return row, false
	}
	return row, true
}

// add adds row to t, unless its sector and level are already given (a
// problem in fail).
func (t *SectorTargets) Add(row sectorTarget, fail *sectorTargetsError) {
	if prev, dup := t.index[row.Sector][row.Level]; dup {
		fail.addf("line %d: %s at %s is already given on line %d", row.line, row.Sector, row.Level, t.rows[prev].line)
		return
	}
	if t.index[row.Sector] == nil {
		t.index[row.Sector] = map[string]int{}
	}
	t.index[row.Sector][row.Level] = len(t.rows)
	t.rows = append(t.rows, row)
}

func quoteJoin(ss []string) string {
	if len(ss) == 0 {
		return "nothing"
	}
	return strings.Join(pipeline.QuoteAll(ss), ", ")
}

func isBlankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func csvErrorText(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if pe.Err == csv.ErrFieldCount {
			return fmt.Sprintf("line %d: wrong number of fields", pe.Line)
		}
		return fmt.Sprintf("line %d, column %d: %v", pe.StartLine, pe.Column, pe.Err)
	}
	return err.Error()
}

// detectDelimiter picks the delimiter of the first non-comment line among
// comma, semicolon and tab: the one that occurs most outside quotes.
func detectDelimiter(text string) rune {
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		return pipeline.HeaderDelimiter(l)
	}
	return ','
}

// canonicalSector reads a targets file's sector by the workbook's rule
// (SectorValue): the service's value, or a spelling of the gazette.
func canonicalSector(s string) (string, bool) {
	v, _, _, ok := pipeline.SectorValue(s)
	return v, ok
}

// sectorLevelNames maps level names (lower case, spaces collapsed) to
// counter level names.
var sectorLevelNames = map[string]string{
	"top_managers":      "top_managers",
	"top management":    "top_managers",
	"senior_managers":   "senior_managers",
	"senior management": "senior_managers",
	"middle_managers":   "middle_managers",
	"professionally qualified and experienced specialists and mid-management": "middle_managers",
	"junior_managers": "junior_managers",
	"skilled technical and academically qualified workers, junior management, supervisors, foremen and superintendents": "junior_managers",
}

func canonicalSectorLevel(s string) (string, string) {
	n := strings.ToLower(strings.Join(strings.Fields(s), " "))
	if n == "" {
		return "", "the level is blank"
	}
	if l, ok := sectorLevelNames[n]; ok {
		return l, ""
	}
	if pipeline.Contains(pipeline.OccupationalLevels, n) || strings.HasPrefix(n, "semi-skilled") || strings.HasPrefix(n, "unskilled") {
		return "", fmt.Sprintf("%q has no sector target (only %s have)", s, strings.Join(SectorLevels, ", "))
	}
	if sugg := pipeline.Closest(n, SectorLevels, 1); len(sugg) > 0 {
		return "", fmt.Sprintf("%q is not a level with a sector target; did you mean %q?", s, sugg[0])
	}
	return "", fmt.Sprintf("%q is not a level with a sector target (use %s)", s, strings.Join(SectorLevels, ", "))
}

// lookup returns the figures of a sector at a level.
func (t *SectorTargets) lookup(sector, level string) (sectorTarget, bool) {
	i, ok := t.index[sector][level]
	if !ok {
		return sectorTarget{}, false
	}
	return t.rows[i], true
}

// hasSector reports whether the targets give any figure for sector.
func (t *SectorTargets) hasSector(sector string) bool { return len(t.index[sector]) > 0 }

// sourceName returns the source for presentations: the embedded copy's
// description, or the path of a --targets file as given.
func (t *SectorTargets) sourceName() string {
	if t.source == "" {
		return EmbeddedSectorTargetsSource
	}
	return t.source
}
