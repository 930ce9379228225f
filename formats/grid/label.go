package grid

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

var (
	reGridYear = regexp.MustCompile(`(?i)\b(?:year|yr\.?|y)\s*(?:no\.?\s*|number\s*|#\s*)?(\d{1,2})\b`)
	reGridFY   = regexp.MustCompile(`(?i)(?:\b|fy)((?:19|20)\d{2})\s*[/\-–—]\s*(\d{2}|\d{4})\b`)
	// reGridFYEnd is a financial year named by the year it ends in
	// ("FY2028"), unless reGridFYNext follows (a second year).
	reGridFYEnd  = regexp.MustCompile(`(?i)\bFY\s*'?((?:19|20)\d{2})\b`)
	reGridFYNext = regexp.MustCompile(`^\s*[/\-–—]\s*\d`)
	// reGridDate is a date in a title: day/month/year either way round,
	// year first, or with the month written out ("1 September 2026").
	reGridDate = regexp.MustCompile(`\b(?:\d{1,2}[/.\-]\d{1,2}[/.\-]\d{4}|\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}|\d{1,2}(?:st|nd|rd|th)?[ \-]\pL{3,9}\.?[ \-]\d{4})\b`)
	// reGridDateRange is two dates with a dash or "to" between them: the
	// dates of a financial year ("01/09/2026 – 31/08/2027").
	reGridDateRange = regexp.MustCompile(`(?i)(` + reGridDate.String() + `)\s*(?:[\-–—]|to|until|tot)\s*(` + reGridDate.String() + `)`)
)

// gridSection is the section of form EEA13 a grid belongs to
// (docs/formats.md, EEA13 sections): its numerical targets (a year's
// targets, the default), its numerical goals (the final year's targets) or
// its workforce profile (the current workforce, the baseline: never a
// target).
type gridSection int

const (
	sectionTargets gridSection = iota
	sectionGoals
	sectionProfile
)

var (
	reSectionTargets = regexp.MustCompile(`(?i)\bnumerical\s+targets?\b`)
	reSectionGoals   = regexp.MustCompile(`(?i)\bnumerical\s+goals?\b`)
	reSectionProfile = regexp.MustCompile(`(?i)\bworkforce\s+profiles?\b`)
	reBaseline       = regexp.MustCompile(`(?i)\bbaseline\b`)
	// reIncomeTitle is the title of a table of money (form EEA4's income
	// differentials): the same level rows, with Rand amounts.
	reIncomeTitle = regexp.MustCompile(`(?i)\b(?:remuneration|income|salar(?:y|ies)|wages?|earnings|pay|rand|eea\s*4)\b`)
)

// sectionOf returns the EEA13 section a grid's title names, and whether
// it names one: "Workforce profile" or "baseline" (a profile), "Numerical
// goals", "Numerical targets".
func sectionOf(text string) (gridSection, bool) {
	if !sectionHint(text) {
		return sectionTargets, false
	}
	if reBaseline.MatchString(text) {
		return sectionProfile, true
	}
	return sectionNamed(text)
}

// headingOf returns the EEA13 section a heading above grids names ("4.1
// Workforce profile", "4.2 Numerical goals"): a short line, never a
// sentence of notes, and "baseline" alone makes no heading.
func headingOf(text string) (gridSection, bool) {
	if !sectionHint(text) || len(strings.Fields(text)) > 12 {
		return sectionTargets, false
	}
	return sectionNamed(text)
}

// sectionNamed returns the section a text names by the words of the form.
func sectionNamed(text string) (gridSection, bool) {
	switch {
	case reSectionProfile.MatchString(text):
		return sectionProfile, true
	case reSectionGoals.MatchString(text):
		return sectionGoals, true
	case reSectionTargets.MatchString(text):
		return sectionTargets, true
	}
	return sectionTargets, false
}

// sectionHint is sectionOf's quick test, without allocating: the text
// holds "numerical", "profile" or "baseline" in any case.
func sectionHint(text string) bool {
	return containsFold(text, "numerical") || containsFold(text, "profile") || containsFold(text, "baseline")
}

// containsFold reports whether s holds the lower-case ASCII word w in any
// letter case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for ; j < len(w); j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				break
			}
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// gridLabel is a parsed grid label cell.
type gridLabel struct {
	row, col   int // 1-based
	yearNumber int
	// section is the EEA13 section the title names, or the heading above
	// it (findGrids); sectionNamed says the title itself names it.
	section      gridSection
	sectionNamed bool
	// weak: a title naming only a target type, a label only under a
	// heading of goals or a profile, and then only with a header below.
	weak bool
	// income: the title names money (reIncomeTitle); the grid is refused
	// as form EEA4's, never read as targets.
	income     bool
	fy         string // "2026/27" as written (separator normalised), or ""
	targetType string // "" when unclear
	unclear    bool   // it mentions disabilities, but whether as its subject is unclear
	// rangeErr says why the dates in the title give no financial year
	// (reported by checkTitles; the grid is not read).
	rangeErr string
}

// gridMaybeLabel is parseGridLabel's quick test: a label has a letter (its
// title) and a digit (its year number or financial year), which a counter
// or an empty cell has not.
func gridMaybeLabel(text string) bool {
	letter, digit := false, false
	for i := 0; i < len(text) && !(letter && digit); i++ {
		c := text[i]
		letter = letter || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0x80
		digit = digit || c >= '0' && c <= '9'
	}
	// The title of EEA13's goals or profile names no year.
	return letter && (digit || containsFold(text, "goal") || containsFold(text, "profile") || containsFold(text, "baseline"))
}

// parseGridLabel recognises a grid label: a target type together with a
// year number and/or a financial year. A label whose target type is
// unclear is a label all the same (unclear set), so that the grid below it
// is reported, never read as the wrong target nor dropped.
//
// The financial year is written "2026/27" (also "FY2026/27"), "FY2028"
// (the one that ends in 2028, read by pipeline.ParseFinancialYear), or as
// the dates of the year ("Year 1 (01/09/2026 – 31/08/2027)", read by
// pipeline.DateRangeFinancialYear); dates are taken out of the title
// before the rest is read, so their digits are never a year.
func parseGridLabel(text string) (gridLabel, bool) {
	if len(text) > 120 || !gridMaybeLabel(text) {
		return gridLabel{}, false
	}
	return gridLabels.get(text)
}

// gridLabelMemo remembers what parseGridLabel made of a text: the sheets
// of a workbook repeat their labels and details (an export of thousands
// of plans has a handful of distinct labels), and parsing one takes a few
// regular expressions. It is bounded (emptied when full) and safe for
// files read at the same time.
type gridLabelMemo struct {
	mu sync.Mutex
	m  map[string]gridLabelMemoed
}

type gridLabelMemoed struct {
	g  gridLabel
	ok bool
}

const gridLabelMemoMax = 1 << 12

var gridLabels gridLabelMemo

func (c *gridLabelMemo) get(text string) (gridLabel, bool) {
	c.mu.Lock()
	r, hit := c.m[text]
	c.mu.Unlock()
	if hit {
		return r.g, r.ok
	}
	g, ok := parseGridLabelText(text)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= gridLabelMemoMax {
		c.m = make(map[string]gridLabelMemoed, 64)
	}
	c.m[strings.Clone(text)] = gridLabelMemoed{g, ok}
	c.mu.Unlock()
	return g, ok
}

// parseGridLabelText is parseGridLabel without the quick test and the memo.
func parseGridLabelText(text string) (gridLabel, bool) {
	var g gridLabel
	rest := text
	var rangeFY pipeline.FinancialYear
	if m := reGridDateRange.FindStringSubmatchIndex(rest); m != nil {
		from, to := rest[m[2]:m[3]], rest[m[4]:m[5]]
		fy, err := pipeline.DateRangeFinancialYear(from, to)
		if err != nil {
			g.rangeErr = err.Error()
		}
		rangeFY = fy
		rest = rest[:m[0]] + " " + rest[m[1]:]
	}
	rest = reGridDate.ReplaceAllString(rest, " ")
	tt, unclear, ok := templates.TitleTargetType(rest)
	if !ok {
		return gridLabel{}, false
	}
	g.targetType, g.unclear = tt, unclear
	g.section, g.sectionNamed = sectionOf(rest)
	g.income = reIncomeTitle.MatchString(rest)
	if m := reGridFY.FindStringSubmatch(rest); m != nil {
		g.fy = m[1] + "/" + m[2]
	} else if m := reGridFYEnd.FindStringSubmatchIndex(rest); m != nil && !reGridFYNext.MatchString(rest[m[1]:]) {
		g.fy = "FY" + rest[m[2]:m[3]]
	}
	if m := reGridYear.FindStringSubmatch(rest); m != nil {
		g.yearNumber, _ = strconv.Atoi(m[1])
	}
	if rangeFY != 0 {
		if named, err := pipeline.ParseFinancialYear(g.fy); g.fy != "" && err == nil && named != rangeFY {
			g.rangeErr = fmt.Sprintf("the title names the financial year %s, but its dates are in %s", named, rangeFY)
		}
		g.fy = rangeFY.String()
	}
	if g.fy == "" && g.yearNumber == 0 && g.rangeErr == "" && (!g.sectionNamed || g.section == sectionTargets) {
		return gridLabel{}, false // a year is needed, but for the goals and the profile
	}
	return g, true
}
