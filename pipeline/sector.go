package pipeline

import (
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
)

// SectorNotice names the notice the sectoral numerical targets come from.
const SectorNotice = "GN 6124, Government Gazette 52514, 15 April 2025"

// SectorCaveat is said wherever the sector figures are shown: the embedded
// figures were transcribed by public sources and not all checked against
// the gazette.
const SectorCaveat = "The figures should be checked against the gazette before they are relied on; a corrected file can be given with --targets."

// EmbeddedSectorTargetsSource is the source name of the embedded figures.
const EmbeddedSectorTargetsSource = "embedded copy of sector-targets-2025.csv"

// DisabilityTarget is the share of the whole workforce that should be
// people with disabilities, in every sector: 3%.
const DisabilityTarget = Pct(300)

// SectorLevels are the four occupational levels that have sector targets,
// from the top down. Semi-skilled and unskilled levels have none.
var SectorLevels = OccupationalLevels[:4]

// designatedMaleRaces and designatedFemaleRaces are the races whose counters
// count towards the designated-group figures. Foreign nationals are never
// designated; white women are, white men are not.
var (
	designatedMaleRaces   = []string{"african", "coloured", "indian"}
	designatedFemaleRaces = []string{"african", "coloured", "indian", "white"}
)

//go:embed sector-targets-2025.csv
var embeddedSectorTargets []byte

// EmbeddedSectorTargetsCSV returns the embedded targets file as bytes.
func EmbeddedSectorTargetsCSV() []byte { return append([]byte(nil), embeddedSectorTargets...) }

// Pct is a percentage in hundredths of a percent: 18.6% is Pct(1860). It
// keeps the targets exact so that comparisons need no floating point.
type Pct int64

// ParsePct parses a percentage such as "18.6", "18,6", "18.60 %" or "3".
// It must be between 0 and 100 with at most two decimals.
func ParsePct(s string) (Pct, error) {
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
	v, err := ParsePct(strings.Trim(string(b), `"`))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// SectorTarget is the pair of figures of one sector at one level: the
// shares of the level's headcount that should be designated-group males and
// designated-group females by the end of the plan.
type SectorTarget struct {
	Sector string `json:"sector"`
	Level  string `json:"level"`
	Male   Pct    `json:"designated_male_pct"`
	Female Pct    `json:"designated_female_pct"`
	Line   int    `json:"-"` // line of the targets file, 0 when unknown
}

// SectorTargets are the sectoral numerical targets, by sector and level,
// and the file they came from.
type SectorTargets struct {
	Source string // EmbeddedSectorTargetsSource or the path of a --targets file
	rows   []SectorTarget
	index  map[string]map[string]int
}

// DefaultSectorTargets returns the embedded 2025 sectoral targets.
func DefaultSectorTargets() *SectorTargets {
	t, err := ParseSectorTargets(strings.NewReader(string(embeddedSectorTargets)), EmbeddedSectorTargetsSource)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return t
}

// LoadSectorTargets reads a targets file (see ParseSectorTargets); its path
// becomes the Source.
func LoadSectorTargets(path string) (*SectorTargets, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sector targets: %w", err)
	}
	defer f.Close()
	return ParseSectorTargets(f, path)
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

// SectorTargetsError lists every problem of a targets file, each with its
// line and column.
type SectorTargetsError struct {
	Source   string
	Problems []string
}

func (e *SectorTargetsError) Error() string {
	head := fmt.Sprintf("sector targets file %s", e.Source)
	if len(e.Problems) == 1 {
		return head + ": " + e.Problems[0]
	}
	return fmt.Sprintf("%s: %d problems:\n  %s", head, len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// ParseSectorTargets reads sector targets as CSV with a header row naming
// the columns sector, level, designated_male_pct and designated_female_pct
// (any order, any case; other columns are ignored). The delimiter is found
// from the header line among comma, semicolon and tab; lines starting with
// # are comments. Sectors are the service's sector values (matched without
// regard to case); levels are counter level names (top_managers,
// senior_managers, middle_managers, junior_managers) or the gazette's level
// names; percentages are 0-100 with at most two decimals. Every problem is
// reported, each with its line, as a *SectorTargetsError.
func ParseSectorTargets(r io.Reader, source string) (*SectorTargets, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sector targets file %s: %w", source, err)
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	fail := &SectorTargetsError{Source: source}
	addf := func(format string, args ...any) { fail.Problems = append(fail.Problems, fmt.Sprintf(format, args...)) }

	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma = detectDelimiter(text)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false

	header, err := cr.Read()
	if err == io.EOF {
		addf("the file is empty (expected a header row: %s,%s,%s,%s)", colSector, colLevel, colMale, colFemale)
		return nil, fail
	}
	if err != nil {
		addf("%s", csvErrorText(err))
		return nil, fail
	}
	headerLine, _ := cr.FieldPos(0)
	cols := map[string]int{}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		if _, dup := cols[name]; dup && name != "" {
			addf("line %d: column %q appears twice", headerLine, strings.TrimSpace(h))
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
		addf("line %d: the header row has no %s column (found %s; expected %s,%s,%s,%s)", headerLine,
			strings.Join(missing, ", "), quoteJoin(header), colSector, colLevel, colMale, colFemale)
		return nil, fail
	}

	t := &SectorTargets{Source: source, index: map[string]map[string]int{}}
	field := func(rec []string, col string) string {
		if i := cols[col]; i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	for len(fail.Problems) < maxTargetProblems {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			addf("%s", csvErrorText(err))
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
		at := func(col string) string {
			return fmt.Sprintf("line %d, column %d (%s)", line, cols[col]+1, col)
		}
		row := SectorTarget{Line: line}
		ok := true
		rawSector := field(rec, colSector)
		if s, found := canonicalSector(rawSector); found {
			row.Sector = s
		} else {
			ok = false
			if rawSector == "" {
				addf("%s: the sector is blank", at(colSector))
			} else if sugg := Closest(rawSector, Sectors, 2); len(sugg) > 0 {
				addf("%s: %q is not a sector of the service; did you mean %s?", at(colSector), rawSector, strings.Join(quoteAll(sugg), " or "))
			} else {
				addf("%s: %q is not a sector of the service (the sectors are the service's sector values, such as %q)", at(colSector), rawSector, Sectors[0])
			}
		}
		rawLevel := field(rec, colLevel)
		if l, msg := canonicalSectorLevel(rawLevel); msg == "" {
			row.Level = l
		} else {
			ok = false
			addf("%s: %s", at(colLevel), msg)
		}
		for _, c := range []struct {
			col string
			dst *Pct
		}{{colMale, &row.Male}, {colFemale, &row.Female}} {
			v, err := ParsePct(field(rec, c.col))
			if err != nil {
				ok = false
				addf("%s: %v", at(c.col), err)
				continue
			}
			*c.dst = v
		}
		if !ok {
			continue
		}
		if row.Male+row.Female > 10000 {
			addf("line %d: the two figures add up to %s%%, more than 100%%", line, (row.Male + row.Female).String())
			continue
		}
		if prev, dup := t.index[row.Sector][row.Level]; dup {
			addf("line %d: %s at %s is already given on line %d", line, row.Sector, row.Level, t.rows[prev].Line)
			continue
		}
		if t.index[row.Sector] == nil {
			t.index[row.Sector] = map[string]int{}
		}
		t.index[row.Sector][row.Level] = len(t.rows)
		t.rows = append(t.rows, row)
	}
	if len(fail.Problems) >= maxTargetProblems {
		addf("further lines not checked after %d problems", maxTargetProblems)
	}
	if len(fail.Problems) > 0 {
		return nil, fail
	}
	if len(t.rows) == 0 {
		addf("the file has a header row but no targets")
		return nil, fail
	}
	return t, nil
}

func quoteJoin(ss []string) string {
	if len(ss) == 0 {
		return "nothing"
	}
	return strings.Join(quoteAll(ss), ", ")
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
		return HeaderDelimiter(l)
	}
	return ','
}

// sectorAliases maps other spellings (lower case) to the service's sector
// values: the gazette spells some sectors differently.
var sectorAliases = map[string]string{
	"transportation and storage": "Transport and Storage",
}

func canonicalSector(s string) (string, bool) {
	n := strings.Join(strings.Fields(s), " ")
	if n == "" {
		return "", false
	}
	for _, v := range Sectors {
		if strings.EqualFold(v, n) {
			return v, true
		}
	}
	v, ok := sectorAliases[strings.ToLower(n)]
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
	if Contains(OccupationalLevels, n) || strings.HasPrefix(n, "semi-skilled") || strings.HasPrefix(n, "unskilled") {
		return "", fmt.Sprintf("%q has no sector target (only %s have)", s, strings.Join(SectorLevels, ", "))
	}
	if sugg := Closest(n, SectorLevels, 1); len(sugg) > 0 {
		return "", fmt.Sprintf("%q is not a level with a sector target; did you mean %q?", s, sugg[0])
	}
	return "", fmt.Sprintf("%q is not a level with a sector target (use %s)", s, strings.Join(SectorLevels, ", "))
}

// Lookup returns the figures of a sector at a level.
func (t *SectorTargets) Lookup(sector, level string) (SectorTarget, bool) {
	i, ok := t.index[sector][level]
	if !ok {
		return SectorTarget{}, false
	}
	return t.rows[i], true
}

// HasSector reports whether the targets give any figure for sector.
func (t *SectorTargets) HasSector(sector string) bool { return len(t.index[sector]) > 0 }

// Rows returns every target in file order. The slice must not be modified.
func (t *SectorTargets) Rows() []SectorTarget { return t.rows }

// WriteCSV writes the targets in the file format ParseSectorTargets reads.
func (t *SectorTargets) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{colSector, colLevel, colMale, colFemale})
	for _, r := range t.rows {
		_ = cw.Write([]string{r.Sector, r.Level, r.Male.String(), r.Female.String()})
	}
	cw.Flush()
	return cw.Error()
}

// SourceName returns the source for presentations: the embedded copy's
// description, or the path of a --targets file as given.
func (t *SectorTargets) SourceName() string {
	if t.Source == "" {
		return EmbeddedSectorTargetsSource
	}
	return t.Source
}

// SectorStatus is the outcome of one check.
type SectorStatus string

// Outcomes of a check.
const (
	SectorMet           SectorStatus = "met"
	SectorShort         SectorStatus = "short"
	SectorNotAssessable SectorStatus = "not_assessable"
)

// ShareResult is one share measured against its target: the count of the
// group, the share of the headcount it is, and how far it is from the target.
type ShareResult struct {
	Count       int64   `json:"count"`
	Of          int64   `json:"of"`
	ActualPct   float64 `json:"actual_pct"`
	TargetPct   Pct     `json:"target_pct"`
	Met         bool    `json:"met"`
	ShortPoints float64 `json:"short_points"` // target minus actual, in percentage points, when short (0 when met)
	ShortPeople int64   `json:"short_people"` // additional people of the group needed at this headcount, when short (0 when met)
	Needed      int64   `json:"needed"`       // smallest count of the group that meets the target at this headcount
}

// measureShare compares count out of of against target exactly: met when
// count/of >= target; short by the people needed to reach
// ceil(target*of) at the same headcount.
func measureShare(count, of int64, target Pct) ShareResult {
	r := ShareResult{Count: count, Of: of, TargetPct: target}
	if of <= 0 {
		return r
	}
	r.ActualPct = float64(count) * 100 / float64(of)
	r.Needed = neededFor(target, of)
	r.Met = count >= r.Needed
	if !r.Met {
		r.ShortPeople = r.Needed - count
		// (target*of - count*10000) / (100*of), exact integer numerator.
		num := new(big.Int).Mul(big.NewInt(int64(target)), big.NewInt(of))
		num.Sub(num, new(big.Int).Mul(big.NewInt(count), big.NewInt(10000)))
		nf, _ := new(big.Float).SetInt(num).Float64()
		r.ShortPoints = nf / (100 * float64(of))
	}
	return r
}

// neededFor returns ceil(target% * of), computed exactly.
func neededFor(target Pct, of int64) int64 {
	num := new(big.Int).Mul(big.NewInt(int64(target)), big.NewInt(of))
	den := big.NewInt(10000)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// SectorLevelCheck is one level of one year measured against the sector's
// two figures.
type SectorLevelCheck struct {
	Level  string       `json:"level"`
	Status SectorStatus `json:"status"`
	Reason string       `json:"reason,omitempty"` // why the level is not assessable
	// Blank lists the counters left blank (unknown) when they make the
	// level not assessable.
	Blank     []string `json:"blank_counters,omitempty"`
	Headcount *int64   `json:"headcount,omitempty"`
	// TargetMale and TargetFemale are the sector's figures; HasTarget is
	// false when the targets give none for the level.
	HasTarget    bool         `json:"has_target"`
	TargetMale   Pct          `json:"target_male_pct"`
	TargetFemale Pct          `json:"target_female_pct"`
	Male         *ShareResult `json:"designated_male,omitempty"`
	Female       *ShareResult `json:"designated_female,omitempty"`
	Note         string       `json:"note,omitempty"`
}

// DisabilityCheck is the whole workforce's share of people with
// disabilities in one year against DisabilityTarget.
type DisabilityCheck struct {
	Status    SectorStatus `json:"status"`
	Reason    string       `json:"reason,omitempty"`
	Blank     []string     `json:"blank_counters,omitempty"` // counters left blank (unknown) that make it not assessable
	TargetPct Pct          `json:"target_pct"`
	Share     *ShareResult `json:"share,omitempty"` // Count disabled of Of employees over the six occupational levels
}

// SectorYearCheck is one milestone (financial year) of a plan.
type SectorYearCheck struct {
	YearNumber    int                `json:"year_number"`
	FinancialYear FinancialYear      `json:"-"`
	Final         bool               `json:"final"`
	Levels        []SectorLevelCheck `json:"levels"`
	Disability    DisabilityCheck    `json:"disability"`
}

// MarshalJSON adds the financial year as "2026/27".
func (y SectorYearCheck) MarshalJSON() ([]byte, error) {
	type plain SectorYearCheck
	fy := ""
	if y.FinancialYear != 0 {
		fy = y.FinancialYear.String()
	}
	return json.Marshal(struct {
		FinancialYear string `json:"financial_year"`
		plain
	}{fy, plain(y)})
}

// Label returns the year for people: "2026/27", or "year 2" when the
// financial year is unknown.
func (y SectorYearCheck) Label() string {
	if y.FinancialYear != 0 {
		return y.FinancialYear.String()
	}
	return fmt.Sprintf("year %d", y.YearNumber)
}

// SectorPlanCheck is one plan measured against its sector's targets.
type SectorPlanCheck struct {
	Source    string            `json:"source"`            // file, or "server"
	Account   string            `json:"account,omitempty"` // configured account, for plans from the service
	PlanID    int64             `json:"plan_id,omitempty"`
	Name      string            `json:"plan_name"`
	Company   CompanyIDs        `json:"company"`
	StartDate Date              `json:"start_date"`
	EndDate   Date              `json:"end_date"`
	Sector    string            `json:"sector"`
	Status    SectorStatus      `json:"status"`           // the final year's overall outcome
	Reason    string            `json:"reason,omitempty"` // why the plan as a whole is not assessable
	Notes     []string          `json:"notes,omitempty"`
	Years     []SectorYearCheck `json:"years"`
}

// Title names the plan for people: `plan 12 "Name"` or `"Name" starting 2025-09-01`.
func (p SectorPlanCheck) Title() string {
	name := p.Name
	if name == "" {
		name = "(no name)"
	}
	switch {
	case p.PlanID != 0:
		return fmt.Sprintf("plan %d %q", p.PlanID, name)
	case !p.StartDate.IsZero():
		return fmt.Sprintf("%q starting %s", name, p.StartDate)
	}
	return fmt.Sprintf("%q", name)
}

// FinalYear returns the final year's check, or nil when the plan has none.
func (p SectorPlanCheck) FinalYear() *SectorYearCheck {
	for i := range p.Years {
		if p.Years[i].Final {
			return &p.Years[i]
		}
	}
	return nil
}

// SectorCheckReport is the result of checking plans against the sector
// targets: what every presentation (table, JSON, CSV, XLSX) renders.
type SectorCheckReport struct {
	Notice        string            `json:"notice"`
	TargetsSource string            `json:"targets_source"`
	Caveat        string            `json:"caveat"`
	Plans         []SectorPlanCheck `json:"plans"`
}

// NewSectorCheckReport returns a report of plans checked against t.
func NewSectorCheckReport(t *SectorTargets, plans []SectorPlanCheck) *SectorCheckReport {
	if plans == nil {
		plans = []SectorPlanCheck{}
	}
	return &SectorCheckReport{Notice: SectorNotice, TargetsSource: t.SourceName(), Caveat: SectorCaveat, Plans: plans}
}

// Provenance returns the sentence every presentation carries: the notice,
// the file the figures came from and the caveat.
func (r *SectorCheckReport) Provenance() string {
	return fmt.Sprintf("Sectoral numerical targets of %s (1 Sep 2025 - 31 Aug 2030), figures from %s; people with disabilities: 3%% of the workforce. %s",
		r.Notice, r.TargetsSource, r.Caveat)
}

// SectorSummary counts the plans by the outcome of their final year.
type SectorSummary struct {
	Plans, Met, Short, NotAssessable int
}

// Summary counts the plans by outcome.
func (r *SectorCheckReport) Summary() SectorSummary {
	s := SectorSummary{Plans: len(r.Plans)}
	for _, p := range r.Plans {
		switch p.Status {
		case SectorMet:
			s.Met++
		case SectorShort:
			s.Short++
		default:
			s.NotAssessable++
		}
	}
	return s
}

// AnyShort reports whether any assessable final-year figure of any plan
// falls short.
func (r *SectorCheckReport) AnyShort() bool { return r.Summary().Short > 0 }

// SectorYearInput is one milestone's counters for a check. All and Disabled
// hold the counters known (a counter absent from a map is blank, unknown);
// a nil map means the year has no such target.
type SectorYearInput struct {
	YearNumber    int
	FinancialYear FinancialYear
	All, Disabled map[string]int64
}

// CheckPlanSector measures one plan (as a file describes it, or as
// FromServer converts it) against the targets. cat is the counter catalog
// the plan's targets carry: a counter the catalog lacks makes its level not
// assessable; a catalog counter the plan leaves blank (absent from the
// target's Counters) is unknown and does too. The years checked are the
// plan's financial years when its start and end dates are known (the end
// clamped as the service does), else the years its targets give; the last
// one is the final year.
func CheckPlanSector(p *InputPlan, cat *Catalog, t *SectorTargets) SectorPlanCheck {
	if cat == nil {
		cat = DefaultCatalog()
	}
	out := SectorPlanCheck{
		PlanID: p.PlanID, Name: p.Name, Company: p.Company,
		StartDate: p.StartDate, EndDate: p.EndDate, Sector: p.Sector,
	}
	if p.Origin.File != "" {
		out.Source = p.Origin.File
	}
	years, notes := planYearInputs(p)
	out.Notes = append(out.Notes, notes...)
	switch {
	case p.Sector == "":
		out.Reason = "the plan has no sector, so no sector targets apply"
	case !t.HasSector(p.Sector):
		out.Reason = fmt.Sprintf("the sector %q has no targets in %s", p.Sector, t.SourceName())
	case len(years) == 0:
		out.Reason = "the plan has no milestones to check"
	}
	if out.Reason != "" {
		out.Status = SectorNotAssessable
		return out
	}
	for _, y := range years {
		yc := SectorYearCheck{YearNumber: y.YearNumber, FinancialYear: y.FinancialYear}
		for _, level := range SectorLevels {
			yc.Levels = append(yc.Levels, checkLevel(y, level, cat, t, p.Sector))
		}
		yc.Disability = checkDisability(y, cat)
		out.Years = append(out.Years, yc)
	}
	out.Years[len(out.Years)-1].Final = true
	out.Status = finalStatus(out.Years[len(out.Years)-1])
	return out
}

// finalStatus is short when any assessable figure of the year is short, met
// when none is and at least one is assessable, else not assessable.
func finalStatus(y SectorYearCheck) SectorStatus {
	assessable, short := 0, false
	for _, l := range y.Levels {
		switch l.Status {
		case SectorMet:
			assessable++
		case SectorShort:
			assessable++
			short = true
		}
	}
	switch y.Disability.Status {
	case SectorMet:
		assessable++
	case SectorShort:
		assessable++
		short = true
	}
	switch {
	case short:
		return SectorShort
	case assessable > 0:
		return SectorMet
	}
	return SectorNotAssessable
}

// planYearInputs gathers the plan's targets by year.
func planYearInputs(p *InputPlan) ([]SectorYearInput, []string) {
	var notes []string
	byYear := map[int]*SectorYearInput{}
	var order []int
	get := func(n int, fy FinancialYear) *SectorYearInput {
		y := byYear[n]
		if y == nil {
			y = &SectorYearInput{YearNumber: n, FinancialYear: fy}
			byYear[n] = y
			order = append(order, n)
		}
		if y.FinancialYear == 0 {
			y.FinancialYear = fy
		}
		return y
	}
	startFY := FinancialYear(0)
	if !p.StartDate.IsZero() {
		startFY = FinancialYearOf(p.StartDate)
	}
	// The plan's own years, when its dates are known.
	if years := PlanYears(p.StartDate, ClampEnd(p.EndDate)); len(years) > 0 {
		for i, fy := range years {
			get(i+1, fy)
		}
	}
	for _, t := range p.Targets {
		var n int
		var fy FinancialYear
		switch {
		case startFY != 0:
			var ok bool
			if n, ok = t.Year(p.StartDate); !ok {
				notes = append(notes, fmt.Sprintf("%s: the %s target's year does not fit the plan's start date; left out", t.Origin, t.TargetType))
				continue
			}
			fy = startFY + FinancialYear(n-1)
		case t.FinancialYear != 0:
			// No start date: order by financial year; year numbers are relative.
			fy = t.FinancialYear
			n = int(fy) // renumbered below
		default:
			n = t.YearNumber
		}
		y := get(n, fy)
		switch t.TargetType {
		case TargetAll:
			y.All = t.Counters
		case TargetDisabled:
			y.Disabled = t.Counters
		}
	}
	sort.Ints(order)
	out := make([]SectorYearInput, 0, len(order))
	for _, n := range order {
		out = append(out, *byYear[n])
	}
	if startFY == 0 && len(out) > 0 {
		// Without a start date the year numbers are unknown when only
		// financial years are given: number them in order.
		anyFY := false
		for i := range out {
			if out[i].FinancialYear != 0 {
				anyFY = true
			}
		}
		if anyFY {
			for i := range out {
				out[i].YearNumber = i + 1
			}
		}
	}
	if len(out) > 0 && (p.StartDate.IsZero() || p.EndDate.IsZero()) {
		notes = append(notes, fmt.Sprintf("the plan's dates are not given, so its last year with figures (%s) is taken as the final year", yearLabel(out[len(out)-1])))
	}
	return out, notes
}

func yearLabel(y SectorYearInput) string {
	if y.FinancialYear != 0 {
		return y.FinancialYear.String()
	}
	return fmt.Sprintf("year %d", y.YearNumber)
}

// levelSum sums the counters of a level over every race of the catalog and
// both genders. It reports the standard counters the catalog lacks and the
// catalog counters left blank.
func levelSum(cat *Catalog, counters map[string]int64, level string, races []string, genders []string) (sum int64, lacking, blank []string) {
	for _, r := range races {
		for _, g := range genders {
			name, ok := cat.Counter(r, g, level)
			if !ok {
				lacking = append(lacking, name)
				continue
			}
			v, set := counters[name]
			if !set {
				blank = append(blank, name)
				continue
			}
			sum += v
		}
	}
	return sum, lacking, blank
}

// levelHeadcount sums a level over the five standard races and any further
// race the catalog carries, both genders.
func levelHeadcount(cat *Catalog, counters map[string]int64, level string) (sum int64, lacking, blank []string) {
	sum, lacking, blank = levelSum(cat, counters, level, Races, Genders)
	for _, name := range cat.Names() {
		r, g, l, ok := ParseCounterName(name)
		if !ok || l != level || Contains(Races, r) || !Contains(Genders, g) {
			continue
		}
		if v, set := counters[name]; set {
			sum += v
		} else {
			blank = append(blank, name)
		}
	}
	return sum, lacking, blank
}

func lackingReason(lacking []string) string {
	return fmt.Sprintf("the counter catalog has no %s", listCounters(lacking))
}

func blankReason(what string, blank []string) string {
	return fmt.Sprintf("%s left blank (unknown): %s", what, listCounters(blank))
}

func listCounters(names []string) string {
	const show = 3
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}

func checkLevel(y SectorYearInput, level string, cat *Catalog, t *SectorTargets, sector string) SectorLevelCheck {
	lc := SectorLevelCheck{Level: level, Status: SectorNotAssessable}
	target, ok := t.Lookup(sector, level)
	if !ok {
		lc.Reason = fmt.Sprintf("%s gives no target for %s at this level", t.SourceName(), sector)
		return lc
	}
	lc.HasTarget, lc.TargetMale, lc.TargetFemale = true, target.Male, target.Female
	if y.All == nil {
		lc.Reason = "no all_employees figures for this year"
		return lc
	}
	head, lacking, blank := levelHeadcount(cat, y.All, level)
	if len(lacking) > 0 {
		lc.Reason = lackingReason(lacking)
		return lc
	}
	if len(blank) > 0 {
		lc.Reason, lc.Blank = blankReason("counters", blank), blank
		return lc
	}
	lc.Headcount = &head
	if head == 0 {
		lc.Reason = "no employees at this level"
		return lc
	}
	male, _, _ := levelSum(cat, y.All, level, designatedMaleRaces, []string{"male"})
	female, _, _ := levelSum(cat, y.All, level, designatedFemaleRaces, []string{"female"})
	m, f := measureShare(male, head, target.Male), measureShare(female, head, target.Female)
	lc.Male, lc.Female = &m, &f
	lc.Status = SectorMet
	if !m.Met || !f.Met {
		lc.Status = SectorShort
	}
	if m.Needed+f.Needed > head {
		lc.Note = fmt.Sprintf("at a headcount of %d both figures cannot be met together (they need %d designated men and %d designated women)", head, m.Needed, f.Needed)
	}
	return lc
}

func checkDisability(y SectorYearInput, cat *Catalog) DisabilityCheck {
	dc := DisabilityCheck{Status: SectorNotAssessable, TargetPct: DisabilityTarget}
	if y.All == nil || y.Disabled == nil {
		missing := TargetAll
		if y.All != nil {
			missing = TargetDisabled
		}
		dc.Reason = fmt.Sprintf("no %s figures for this year", missing)
		return dc
	}
	var all, disabled int64
	var lacking, blankAll, blankDis []string
	for _, level := range OccupationalLevels {
		a, la, ba := levelHeadcount(cat, y.All, level)
		d, _, bd := levelHeadcount(cat, y.Disabled, level)
		all += a
		disabled += d
		lacking = append(lacking, la...)
		blankAll = append(blankAll, ba...)
		blankDis = append(blankDis, bd...)
	}
	switch {
	case len(lacking) > 0:
		dc.Reason = lackingReason(lacking)
		return dc
	case len(blankAll) > 0:
		dc.Reason, dc.Blank = blankReason("all_employees counters", blankAll), blankAll
		return dc
	case len(blankDis) > 0:
		dc.Reason, dc.Blank = blankReason("disabled_employees counters", blankDis), blankDis
		return dc
	case all == 0:
		dc.Reason = "no employees"
		return dc
	}
	s := measureShare(disabled, all, DisabilityTarget)
	dc.Share = &s
	dc.Status = SectorMet
	if !s.Met {
		dc.Status = SectorShort
	}
	return dc
}

// CatalogOfPlan returns the catalog of the counters a plan's targets carry
// (for plans from the service, whose targets hold every counter the server
// has); nil when the plan has no counters.
func CatalogOfPlan(p *InputPlan) *Catalog {
	all := map[string]int64{}
	for _, t := range p.Targets {
		for k := range t.Counters {
			all[k] = 0
		}
	}
	c, err := CatalogFromCounters(all)
	if err != nil {
		return nil
	}
	return c
}

// MatchStoredPlan finds the stored plan a file plan describes, by the rule
// of MatchPlans. It returns the indexes of every match; more than one means
// the match is ambiguous.
func MatchStoredPlan(p *InputPlan, stored []Plan) []int {
	var out []int
	for _, m := range MatchPlans(stored, p.PlanID, p.Name, p.StartDate, nil) {
		for i := range stored {
			if &stored[i] == m {
				out = append(out, i)
			}
		}
	}
	return out
}

// FillFromServer returns the plan as it would stand once the file is
// applied to the stored plan: the stored plan's metadata and counters, with
// what the file sets on top. Blank file values take the stored value.
func FillFromServer(file *InputPlan, stored *Plan) *InputPlan {
	out := FromServer(stored, file.Company)
	out.Origin = file.Origin
	if file.Name != "" {
		out.Name = file.Name
	}
	if file.Sector != "" {
		out.Sector = file.Sector
	}
	if file.ScorecardID != "" {
		out.ScorecardID = file.ScorecardID
	}
	type key struct {
		year int
		tt   string
	}
	idx := map[key]*InputTarget{}
	for _, t := range out.Targets {
		idx[key{t.YearNumber, t.TargetType}] = t
	}
	for _, ft := range file.Targets {
		n, ok := ft.Year(out.StartDate)
		if !ok {
			continue
		}
		st := idx[key{n, ft.TargetType}]
		if st == nil {
			continue // the service has no such milestone: the file's year is outside the plan
		}
		for k, v := range ft.Counters {
			st.Counters[k] = v
		}
	}
	return out
}

// CheckSector checks every plan against t with the counter catalog cat (nil
// means the default catalog) and returns the report. Each plan's Source is
// its file; callers set Source and Account for plans from the service.
func CheckSector(plans []*InputPlan, cat *Catalog, t *SectorTargets) *SectorCheckReport {
	checks := make([]SectorPlanCheck, 0, len(plans))
	for _, p := range plans {
		checks = append(checks, CheckPlanSector(p, cat, t))
	}
	return NewSectorCheckReport(t, checks)
}

// HeaderDelimiter returns the delimiter of a CSV header line among comma,
// semicolon and tab: the one that occurs most often outside double quotes,
// comma on a tie.
func HeaderDelimiter(line string) rune {
	counts := map[rune]int{}
	inQuotes := false
	for _, r := range line {
		switch {
		case r == '"':
			inQuotes = !inQuotes
		case !inQuotes && (r == ',' || r == ';' || r == '\t'):
			counts[r]++
		}
	}
	best := ','
	for _, r := range []rune{';', '\t'} {
		if counts[r] > counts[best] {
			best = r
		}
	}
	return best
}
