package templates

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// This file is the vocabulary of a grid's title: the label the writer
// puts above a grid (GridLabel, TargetTypeLabel) and the words by which
// the reader tells whose targets a title names (TitleTargetType). Keeping
// both in one place is what makes a written grid read back; the grid
// reader (formats/grid) finds the titles and their years.

// TargetTypeLabel returns the label of a target type: "All employees" or
// "Employees with disabilities".
func TargetTypeLabel(tt string) string {
	switch tt {
	case pipeline.TargetAll:
		return "All employees"
	case pipeline.TargetDisabled:
		return "Employees with disabilities"
	}
	return Humanize(tt)
}

// GridLabel returns the label row text of one grid: "Year 1 — 2026/27 — All
// employees". Either year part may be unknown (0) and is then left out.
func GridLabel(yearNumber int, fy pipeline.FinancialYear, targetType string) string {
	var parts []string
	if yearNumber > 0 {
		parts = append(parts, fmt.Sprintf("Year %d", yearNumber))
	}
	if fy != 0 {
		parts = append(parts, fy.String())
	}
	parts = append(parts, TargetTypeLabel(targetType))
	return strings.Join(parts, " — ")
}

// TargetTypeWords returns a target type's label within a sentence: "all
// employees", "employees with disabilities".
func TargetTypeWords(tt string) string { return strings.ToLower(TargetTypeLabel(tt)) }

var (
	titleAll = regexp.MustCompile(`\ball\b`)
	// titleInclDisabled is a clause that counts people with disabilities
	// in with everyone, as form EEA13 titles its table of all employees:
	// "all employees, including people with disabilities".
	titleInclDisabled = regexp.MustCompile(`\b(?:including|incl|inclusive of|includes|incl of)\s+(?:the\s+)?(?:(?:people|persons|employees|employee|staff|workers|those)\s+)?(?:(?:living\s+)?with\s+(?:a\s+)?(?:disabilities|disability)|disabled(?:\s+(?:people|persons|employees|staff|workers))?|pwds?)\b`)
	// titleDisabledSubject is a phrase whose subject is people with
	// disabilities ("employees with disabilities", "disabled employees"),
	// with an "all" in front of it ("all employees with disabilities").
	titleDisabledSubject = regexp.MustCompile(`\b(?:all\s+)?(?:(?:(?:employees|employee|people|persons|staff|workers)\s+(?:living\s+)?with\s+(?:a\s+)?(?:disabilities|disability))|disabled(?:\s+(?:employees|employee|people|persons|staff|workers))?|disabilities|disability|pwds?)\b`)
	titleDisab           = regexp.MustCompile(`disab|\bpwds?\b`)
	// titleAllOf is "all" that quantifies something else than employees
	// ("all levels", "all races"): no sign of the all_employees target.
	titleAllOf = regexp.MustCompile(`\ball (?:the |our )?(?:occupational )?(?:levels|races|genders|groups|years|categories|sites|site|branches|locations|regions|provinces|divisions|departments|business units|units|operations|offices|companies|subsidiaries|entities|stores|plants|depots)\b`)
	// titleAside is a bracketed part of a title ("(all sites)"); one that
	// names no one (titleAsideWho) qualifies the grid, not its target
	// type, and is not read for it.
	titleAside     = regexp.MustCompile(`[(\[][^()\[\]]*[)\]]`)
	titleAsideWho  = regexp.MustCompile(`(?i)employ|disab|staff|people|person|worker|pwd|everyone|total`)
	titleExclusion = regexp.MustCompile(`\b(?:excluding|excl|except|without|other than|non|not)\b`)
)

// TitleWordings is the advice of an unclear grid title: the two
// wordings the reader accepts.
const TitleWordings = `write "All employees" (or "All employees, including people with disabilities") for the targets of all employees, or "Employees with disabilities" for the targets of employees with disabilities`

// TitleTargetType classifies the target type a grid title names. A title
// is disabled_employees only when people with disabilities are its subject
// ("Employees with disabilities", "Disabled employees"); a clause that
// counts them in ("All employees, including people with disabilities", the
// wording of form EEA13) leaves it all_employees. A title that mentions
// disabilities in another way (excluded, or beside "all employees") is
// unclear. ok is false for text that names no target type.
func TitleTargetType(text string) (targetType string, unclear, ok bool) {
	text = titleAside.ReplaceAllStringFunc(text, func(aside string) string {
		if titleAsideWho.MatchString(aside) {
			return aside
		}
		return " "
	})
	n := Normalize(text)
	rest := titleInclDisabled.ReplaceAllString(n, " ")
	included := rest != n
	disabled := titleDisab.MatchString(rest)
	if disabled && titleExclusion.MatchString(rest) {
		return "", true, true
	}
	rest2 := titleAllOf.ReplaceAllString(titleDisabledSubject.ReplaceAllString(rest, " "), " ")
	all := strings.Contains(rest2, "all employees") || titleAll.MatchString(rest2)
	switch {
	case disabled && (all || included || titleDisab.MatchString(rest2)):
		return "", true, true
	case disabled:
		return pipeline.TargetDisabled, false, true
	case all || included:
		return pipeline.TargetAll, false, true
	}
	return "", false, false
}
