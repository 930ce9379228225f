package templates

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/eepipe/eepipe/pipeline"
)

// This file is the grid workbook's vocabulary: the labels the writer puts
// on a plan sheet and the spellings the reader accepts for them. Keeping
// both in one place is what makes a written workbook read back.

// MetaField is one labelled metadata cell of a grid plan sheet.
type MetaField struct {
	Key     string   // the flat table's column name, e.g. "plan_name"
	Label   string   // the label the writer puts in the sheet
	Aliases []string // further spellings the reader accepts
	Kind    MetaKind
	Help    string // a short explanation for the Instructions sheet and input prompts
}

// MetaKind says how a metadata value is written and validated.
type MetaKind int

// Metadata kinds.
const (
	MetaText       MetaKind = iota // free text
	MetaIdentifier                 // text that keeps leading zeros (number format "@")
	MetaInteger                    // whole number (plan id)
	MetaDate                       // a real date cell
	MetaSector                     // a drop-down of pipeline.Sectors
)

// MetaFields are the plan metadata cells of a grid plan sheet, in the order
// the writer lays them out.
var MetaFields = []MetaField{
	{Key: "plan_id", Label: "Plan ID", Kind: MetaInteger,
		Help: "The number of an existing plan on the service. Leave blank for a new plan."},
	{Key: "plan_name", Label: "Plan name", Aliases: []string{"Name of plan", "Plan"}, Kind: MetaText,
		Help: "The plan's name. With the company and the start date it identifies a new plan on re-runs."},
	{Key: "company_vat_number", Label: "Company VAT number", Aliases: []string{"VAT number", "VAT no", "VAT"}, Kind: MetaIdentifier,
		Help: "VAT number of the client company (kept as text, leading zeros stay)."},
	{Key: "company_registration_number", Label: "Company registration number", Aliases: []string{"Registration number", "Registration no", "Company registration no", "CIPC number"}, Kind: MetaIdentifier,
		Help: "Company registration number, e.g. 2009/012345/07."},
	{Key: "company_id_number", Label: "Company ID number", Aliases: []string{"ID number", "Identification number", "Company identification number"}, Kind: MetaIdentifier,
		Help: "ID number of a sole proprietor."},
	{Key: "start_date", Label: "Start date", Aliases: []string{"Plan start date", "Plan start"}, Kind: MetaDate,
		Help: "First day of the plan, not before 2025-09-01. Needed for a new plan."},
	{Key: "end_date", Label: "End date", Aliases: []string{"Plan end date", "Plan end"}, Kind: MetaDate,
		Help: "Last day of the plan. The service clamps it to 2030-08-31. Needed for a new plan."},
	{Key: "sector", Label: "Sector", Aliases: []string{"Sector of the plan"}, Kind: MetaSector,
		Help: "One of the sectors in the drop-down, or blank."},
	{Key: "scorecard_id", Label: "Scorecard ID", Aliases: []string{"Scorecard"}, Kind: MetaIdentifier,
		Help: "scorecard_...: links the plan to a scorecard; on create it pre-fills the baseline."},
	{Key: "account", Label: "Account", Aliases: []string{"Account name"}, Kind: MetaText,
		Help: "The configured eepipe account the plan belongs to (exports fill it in). Blank: the company or the plan id decides."},
}

// Normalize folds a label for matching: lower case, every run of characters
// other than letters and digits turned into one space, trimmed. "Top
// management", "top_management" and " TOP-management: " all fold to "top
// management".
func Normalize(s string) string {
	if n, ok := normalizeASCII(s); ok {
		return n
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// normalizeASCII is Normalize for a text of ASCII only (false for any
// other), without allocating when the text is already normal: labels are
// matched on every cell of every sheet read.
func normalizeASCII(s string) (string, bool) {
	normal := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return "", false
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
		case c == ' ' && i > 0 && i < len(s)-1 && s[i-1] != ' ':
		default:
			normal = false
		}
	}
	if normal {
		return s, true
	}
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, c)
			continue
		}
		space = true
	}
	return string(b), true
}

// MetaFieldFor returns the metadata field whose label (or alias, or flat
// column name) the text is, after Normalize and without a trailing colon.
func MetaFieldFor(text string) (MetaField, bool) {
	n := Normalize(text)
	if n == "" {
		return MetaField{}, false
	}
	m, ok := metaFieldIndex()[n]
	return m, ok
}

// metaFieldIndex maps the normalised labels, keys and aliases of
// MetaFields to their field (the first one naming it), built once:
// MetaFieldFor runs on every cell of a sheet read.
var metaFieldIndex = sync.OnceValue(func() map[string]MetaField {
	out := map[string]MetaField{}
	add := func(s string, m MetaField) {
		if k := Normalize(s); k != "" {
			if _, dup := out[k]; !dup {
				out[k] = m
			}
		}
	}
	for _, m := range MetaFields {
		add(m.Label, m)
		add(m.Key, m)
		for _, a := range m.Aliases {
			add(a, m)
		}
	}
	return out
})

// levelLabels are the row labels of the default levels, after the statutory
// EE workforce tables (forms EEA2, EEA4, EEA13), and further spellings the
// reader accepts. Beyond these exact spellings, Matcher.Level also accepts
// any spelling with the same words once connectors ("and", "&"), commas
// and slashes, plurals and "middle"/"mid" are set aside, so
// "Skilled technical and academically qualified workers/junior
// management/supervisors/foremen/superintendents" is the skilled level.
var levelLabels = map[string][]string{
	"top_managers":    {"Top management", "Top managers", "Top", "Top management / Executives", "Top management and executives"},
	"senior_managers": {"Senior management", "Senior managers", "Senior"},
	"middle_managers": {"Professionally qualified / middle management", "Middle management", "Middle managers",
		"Mid management", "Mid-management", "Professionally qualified",
		"Professionally qualified and experienced specialists and mid-management",
		"Professionally qualified and experienced specialists",
		"Experienced specialists and mid-management",
		"Professionally qualified / mid-management"},
	"junior_managers": {"Skilled technical / junior management", "Junior management", "Junior managers",
		"Skilled technical", "Skilled",
		"Skilled technical and academically qualified workers, junior management, supervisors, foremen, and superintendents",
		"Skilled technical and academically qualified workers",
		"Junior management, supervisors, foremen and superintendents",
		"Academically qualified workers, junior management, supervisors, foremen and superintendents"},
	"semi_skilled_employees": {"Semi-skilled", "Semi-skilled employees", "Semi skilled",
		"Semi-skilled and discretionary decision making"},
	"unskilled_employees": {"Unskilled", "Unskilled employees", "Unskilled and defined decision making"},
	"total_permanent_employees": {"Total permanent", "Total permanent employees", "Total permanent staff",
		"Permanent total"},
	"temporary_employees":   {"Temporary employees", "Temporary", "Temporary staff", "Non-permanent employees"},
	"grand_total_employees": {"Grand total", "Grand total employees", "Total employees"},
}

var raceLabels = map[string][]string{
	"african":  {"African", "Africans", "A", "Black African", "Black Africans"},
	"coloured": {"Coloured", "Coloureds", "Colored", "C"},
	"indian":   {"Indian", "Indians", "I", "Indian/Asian", "Asian", "Asians", "Asian/Indian"},
	"white":    {"White", "Whites", "W"},
	"foreign":  {"Foreign nationals", "Foreign national", "Foreign", "Foreigners", "FN"},
}

var genderLabels = map[string][]string{
	"male":   {"Male", "Males", "Men", "M"},
	"female": {"Female", "Females", "Women", "F"},
}

// blackGroupWords are the header words of the B-BBEE group "Black", which
// is African, Coloured and Indian together; never one race of the catalog.
var blackGroupWords = map[string]bool{"black": true, "blacks": true, "black people": true, "black persons": true, "black employees": true}

// IsBlackGroup reports whether a column header names the B-BBEE group
// "Black" (alone, or with a gender: "Black male"), which holds the
// African, Coloured and Indian counters together and so can never be read
// as African ("Black African" can: it is the Stats SA name of African).
func (m *Matcher) IsBlackGroup(text string) bool {
	n := Normalize(text)
	if blackGroupWords[n] {
		return true
	}
	words := strings.Fields(n)
	for i := 1; i < len(words); i++ {
		a, b := strings.Join(words[:i], " "), strings.Join(words[i:], " ")
		if _, g := m.genders[b]; g && blackGroupWords[a] {
			return true
		}
		if _, g := m.genders[a]; g && blackGroupWords[b] {
			return true
		}
	}
	return false
}

// BlackGroupAdvice is what to do about a header IsBlackGroup names.
const BlackGroupAdvice = `in B-BBEE "Black" means African, Coloured and Indian together, so its counters cannot be filed under one race and its columns are not read; give African (or "Black African"), Coloured and Indian columns of their own`

// Humanize turns a key such as "semi_skilled_employees" into a label such
// as "Semi skilled employees", for parts that have no label of their own.
func Humanize(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func label(table map[string][]string, key string) string {
	if ls, ok := table[key]; ok {
		return ls[0]
	}
	return Humanize(key)
}

// LevelLabel returns the row label the writer uses for an occupational level.
func LevelLabel(level string) string { return label(levelLabels, level) }

// RaceLabel returns the column header the writer uses for a race.
func RaceLabel(race string) string { return label(raceLabels, race) }

// GenderLabel returns the column header the writer uses for a gender.
func GenderLabel(gender string) string { return label(genderLabels, gender) }

// Matcher recognises the row and column headers of grids for one catalog:
// the writer's labels, the aliases, and the raw keys of the catalog's
// levels, races and genders.
type Matcher struct {
	levels, races, genders map[string]string // normalised spelling -> key
	levelCanon             map[string]string // LevelWords spelling -> key ("" when two levels share it)
	levelKeys              []string          // the catalog's levels, in order
	levelNames             []string          // candidates for suggestions
	raceNames, genderNames []string
	// raceGenderWords is the most words a race and a gender label have
	// together: RaceGender tries every split of a cell's words, so a
	// longer text (a pasted paragraph) is no race and gender at once.
	raceGenderWords int
}

// NewMatcher returns a Matcher for cat (nil: the default catalog). A
// Matcher does not change once made, so the last one made is handed out
// again for the same catalog: a reader makes one per sheet, and a grid
// workbook has thousands of them.
func NewMatcher(cat *pipeline.Catalog) *Matcher {
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	if last := lastMatcher.Load(); last != nil && last.cat == cat {
		return last.m
	}
	m := newMatcher(cat)
	lastMatcher.Store(&catalogMatcher{cat: cat, m: m})
	return m
}

// catalogMatcher is the Matcher last made, and its catalog.
type catalogMatcher struct {
	cat *pipeline.Catalog
	m   *Matcher
}

var lastMatcher atomic.Pointer[catalogMatcher]

func newMatcher(cat *pipeline.Catalog) *Matcher {
	m := &Matcher{levels: map[string]string{}, races: map[string]string{}, genders: map[string]string{}}
	m.levelNames = fill(m.levels, levelLabels, cat.Levels())
	m.levelKeys = cat.Levels()
	m.levelCanon = map[string]string{}
	for _, k := range m.levelKeys {
		for _, sp := range levelSpellings(k) {
			c := LevelWords(sp)
			if prev, taken := m.levelCanon[c]; taken && prev != k {
				m.levelCanon[c] = "" // two levels read the same: neither by this spelling
				continue
			}
			m.levelCanon[c] = k
		}
	}
	m.raceNames = fill(m.races, raceLabels, cat.Races())
	m.genderNames = fill(m.genders, genderLabels, cat.Genders())
	m.raceGenderWords = maxWords(m.races) + maxWords(m.genders)
	return m
}

// Spellings are further words for a Matcher's levels, races and genders
// (a mapping file's, docs/formats.md): each spelling as written, to its
// key.
type Spellings struct {
	Levels, Races, Genders map[string]string
}

// Taught returns a Matcher that reads, besides m's own spellings, those
// of sp: a level spelling in level labels (exactly after Normalize, or by
// its words after LevelWords), a race or gender spelling in headers, alone
// or combined ("Asian (incl. Indian) male"). A spelling m already reads
// as another key is not taken (the mapping file refuses one, BuiltIn). m
// is not changed, nor handed out by NewMatcher.
func (m *Matcher) Taught(sp Spellings) *Matcher {
	t := *m
	t.levels, t.levelCanon = maps.Clone(m.levels), maps.Clone(m.levelCanon)
	t.races, t.genders = maps.Clone(m.races), maps.Clone(m.genders)
	for text, key := range sp.Levels {
		if n := Normalize(text); n != "" && slices.Contains(m.levelKeys, key) {
			if prev, taken := t.levels[n]; !taken || prev == key {
				t.levels[n] = key
			}
			if c := LevelWords(text); t.levelCanon[c] == "" {
				t.levelCanon[c] = key
			}
		}
	}
	teach := func(into map[string]string, from map[string]string) {
		for text, key := range from {
			if n := Normalize(text); n != "" {
				if _, taken := into[n]; !taken {
					into[n] = key
				}
			}
		}
	}
	teach(t.races, sp.Races)
	teach(t.genders, sp.Genders)
	t.raceGenderWords = maxWords(t.races) + maxWords(t.genders)
	return &t
}

// BuiltIn returns the key of kind ("levels", "races" or "genders") that
// the default catalog's vocabulary reads text as, if any: a mapping file
// may not give eepipe's own spelling of one name to another.
func BuiltIn(kind, text string) (string, bool) {
	m := NewMatcher(nil)
	switch kind {
	case "levels":
		return m.Level(text)
	case "races":
		return m.Race(text)
	case "genders":
		return m.Gender(text)
	}
	return "", false
}

// maxWords returns the most words of a key of labels.
func maxWords(labels map[string]string) int {
	n := 0
	for s := range labels {
		n = max(n, len(strings.Fields(s)))
	}
	return n
}

func fill(into map[string]string, table map[string][]string, keys []string) []string {
	var names []string
	for _, k := range keys {
		spellings := append([]string{label(table, k), k}, table[k]...)
		for _, s := range spellings {
			if n := Normalize(s); n != "" {
				if _, taken := into[n]; !taken {
					into[n] = k
				}
			}
		}
		names = append(names, label(table, k), k)
	}
	return names
}

// levelSpellings returns the writer's label, the key and the aliases of a level.
func levelSpellings(key string) []string {
	return append([]string{label(levelLabels, key), key}, levelLabels[key]...)
}

// LevelWords folds an occupational-level label for matching beyond
// Normalize: connectors ("and", "or", "&", "the", "of") are dropped,
// "middle" reads "mid", "managers" (and "mgmt") read "management", and
// plurals read as singulars ("foremen", "supervisors"), so "Professionally qualified, experienced specialists and
// middle management" and "Professionally qualified and experienced
// specialists and mid-management" fold alike, as do commas and slashes
// between the parts of a statutory level name.
func LevelWords(s string) string {
	words := strings.Fields(Normalize(s))
	out := make([]string, 0, len(words)+1)
	for _, w := range words {
		switch w {
		case "and", "or", "the", "of", "amp":
			continue
		case "middle":
			w = "mid"
		case "foremen":
			w = "foreman"
		case "manager", "managers", "mgmt":
			w = "management" // "junior managers, supervisors, ..."
		case "semiskilled":
			out = append(out, "semi")
			w = "skilled"
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// Level returns the level key a row label names: one of the spellings
// exactly (after Normalize), or the same words after LevelWords.
func (m *Matcher) Level(text string) (string, bool) {
	n := Normalize(text)
	if k, ok := m.levels[n]; ok {
		return k, true
	}
	if n == "" {
		return "", false
	}
	if k := m.levelCanon[LevelWords(text)]; k != "" {
		return k, true
	}
	if bare := Unnumbered(text); bare != text {
		return m.Level(bare)
	}
	return "", false
}

// reNumbering is the numbering in front of a label as forms and reports
// print it ("1. Top management", "1) ...", "(a) ...", "a) ...", "iv. ...",
// "4.1 ..."), and reFootnote a footnote mark after it ("Top management
// (1)", "Semi-skilled*", "Indian¹", "[2]").
var (
	reNumbering = regexp.MustCompile(`^\s*(?:\(?(?:\d{1,2}(?:\.\d{1,2})*|[a-zA-Z]|[ivxIVX]{1,4})\)|(?:\d{1,2}(?:\.\d{1,2})*|[a-zA-Z]|[ivxIVX]{1,4})\.|\d{1,2}(?:\.\d{1,2})*)\s+`)
	reFootnote  = regexp.MustCompile(`\s*(?:\(\d{1,2}\)|\[\d{1,2}\]|\*+|[¹²³⁴⁵⁶⁷⁸⁹⁰]+)\s*$`)
)

// Unnumbered returns a label without the numbering in front of it and the
// footnote mark after it (reNumbering, reFootnote): "1. Top management",
// "a) Top management" and "Top management (1)" are "Top management". A
// text that is only a number or a mark is returned as it is.
func Unnumbered(text string) string {
	if !maybeNumbered(text) || (!hasFootnote(text) && !strings.Contains(text, " ")) {
		return text // no mark after it, and no numbering before a word
	}
	out := reFootnote.ReplaceAllString(reNumbering.ReplaceAllString(text, ""), "")
	if strings.TrimSpace(out) == "" {
		return text
	}
	return out
}

// hasFootnote is unfootnoted's quick test: the text ends (spaces aside)
// with a bracket, a star or a character beyond ASCII (a superscript).
func hasFootnote(s string) bool {
	s = strings.TrimRight(s, " ")
	if s == "" {
		return false
	}
	c := s[len(s)-1]
	return c == ')' || c == ']' || c == '*' || c >= 0x80
}

// maybeNumbered is Unnumbered's quick test: a digit, a bracket, a full
// stop, a star or a character beyond ASCII, which a plain label has not.
func maybeNumbered(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '(', c == ')', c == '[', c == '.', c == '*', c >= 0x80:
			return true
		}
	}
	return false
}

// Race returns the race key a column header names (a footnote mark after
// it set aside: "Indian (1)").
func (m *Matcher) Race(text string) (string, bool) {
	if k, ok := m.races[Normalize(text)]; ok {
		return k, true
	}
	if bare := unfootnoted(text); bare != text {
		k, ok := m.races[Normalize(bare)]
		return k, ok
	}
	return "", false
}

// Gender returns the gender key a column header names (a footnote mark
// after it set aside).
func (m *Matcher) Gender(text string) (string, bool) {
	if k, ok := m.genders[Normalize(text)]; ok {
		return k, true
	}
	if bare := unfootnoted(text); bare != text {
		k, ok := m.genders[Normalize(bare)]
		return k, ok
	}
	return "", false
}

// unfootnoted returns a header without a footnote mark after it.
func unfootnoted(text string) string {
	if !hasFootnote(text) {
		return text
	}
	out := reFootnote.ReplaceAllString(text, "")
	if strings.TrimSpace(out) == "" {
		return text
	}
	return out
}

// RaceGender recognises a combined column header such as "African male",
// "african_male", "Male African", "A male" or the two-letter code "AM"
// (a one-letter race and a one-letter gender).
func (m *Matcher) RaceGender(text string) (race, gender string, ok bool) {
	if race, gender, ok = m.raceGender(text); ok {
		return race, gender, true
	}
	if bare := unfootnoted(text); bare != text {
		return m.raceGender(bare)
	}
	return "", "", false
}

// raceGender is RaceGender without setting a footnote aside.
func (m *Matcher) raceGender(text string) (race, gender string, ok bool) {
	words := strings.Fields(Normalize(text))
	if len(words) > m.raceGenderWords {
		return "", "", false
	}
	if len(words) == 1 {
		if r, g, ok := m.raceGenderCode(words[0]); ok {
			return r, g, true
		}
	}
	for i := 1; i < len(words); i++ {
		a, b := strings.Join(words[:i], " "), strings.Join(words[i:], " ")
		if r, ok1 := m.races[a]; ok1 {
			if g, ok2 := m.genders[b]; ok2 {
				return r, g, true
			}
		}
		if g, ok1 := m.genders[a]; ok1 {
			if r, ok2 := m.races[b]; ok2 {
				return r, g, true
			}
		}
	}
	return "", "", false
}

// raceGenderCode reads a combined code of two or three letters: a race's
// code and a gender's letter either way round, as forms EEA2 and EEA4 and
// HR systems print them: "AM", "WF" (race first), "MA", "FW" (gender
// first), "FNM", "FNF" (foreign national male, female). The two orders
// never meet: a race code starts with A, C, I, W or FN, a gender code is M
// or F.
func (m *Matcher) raceGenderCode(w string) (race, gender string, ok bool) {
	if len(w) < 2 || len(w) > 3 {
		return "", "", false
	}
	code := func(s string) bool { return len(s) <= 2 }
	if r, ok1 := m.races[w[:len(w)-1]]; ok1 && code(w[:len(w)-1]) {
		if g, ok2 := m.genders[w[len(w)-1:]]; ok2 {
			return r, g, true
		}
	}
	if g, ok1 := m.genders[w[:1]]; ok1 {
		if r, ok2 := m.races[w[1:]]; ok2 && code(w[1:]) {
			return r, g, true
		}
	}
	return "", "", false
}

// SuggestLevel returns the closest level labels and keys to text. It never
// comes back empty for a catalog with levels: a label too far from every
// level by spelling gets the levels that share the most words with it, or
// else the first levels of the catalog.
func (m *Matcher) SuggestLevel(text string) []string {
	if out := closestDistinct(text, m.levelNames); len(out) > 0 {
		return out
	}
	return m.levelsByWords(text)
}

// levelsByWords ranks the catalog's levels by the share of words (after
// LevelWords) their best spelling has in common with text, and returns the
// labels of the first three.
func (m *Matcher) levelsByWords(text string) []string {
	words := strings.Fields(LevelWords(text))
	type scored struct {
		key   string
		score float64
		i     int
	}
	var all []scored
	for i, k := range m.levelKeys {
		best := 0.0
		for _, sp := range levelSpellings(k) {
			best = max(best, wordOverlap(words, strings.Fields(LevelWords(sp))))
		}
		all = append(all, scored{k, best, i})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	var out []string
	for _, s := range all {
		if len(out) == 3 {
			break
		}
		out = append(out, label(levelLabels, s.key))
	}
	return out
}

// wordOverlap is the Jaccard similarity of two word lists.
func wordOverlap(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	in := map[string]bool{}
	for _, w := range a {
		in[w] = true
	}
	common, union := 0, len(in)
	seen := map[string]bool{}
	for _, w := range b {
		if seen[w] {
			continue
		}
		seen[w] = true
		if in[w] {
			common++
		} else {
			union++
		}
	}
	return float64(common) / float64(union)
}

// SuggestRace returns the closest race headers and keys to text.
func (m *Matcher) SuggestRace(text string) []string {
	return closestDistinct(text, m.raceNames)
}

// SuggestGender returns the closest gender headers and keys to text.
func (m *Matcher) SuggestGender(text string) []string {
	return closestDistinct(text, m.genderNames)
}

// closestDistinct returns up to three of the closest names to text, leaving
// out a name that reads the same as one before it ("African", "african").
func closestDistinct(text string, names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range pipeline.Closest(text, names, 6) {
		if k := Normalize(n); !seen[k] && len(out) < 3 {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}
