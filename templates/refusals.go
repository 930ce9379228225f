package templates

import (
	"regexp"
	"strings"
)

// This file names the row labels a grid may hold that are no occupational
// level, so that the reader refuses each with its real cause
// (docs/formats.md, the grid workbook: levels).

// categoryLabels are the occupational categories of the old EEA tables
// (after ISCO's major groups): a table by category is not a table by
// level, and its rows are never matched to levels, whatever words they
// share ("senior officials and managers" is not senior management).
var categoryLabels = []string{
	"Legislators, senior officials and managers",
	"Professionals",
	"Technicians and associate professionals",
	"Clerks",
	"Service workers and shop and market sales workers",
	"Service and sales workers",
	"Skilled agricultural and fishery workers",
	"Craft and related trades workers",
	"Plant and machine operators and assemblers",
	"Elementary occupations",
}

// categoryWords are categoryLabels folded by LevelWords.
var categoryWords = func() map[string]bool {
	out := map[string]bool{}
	for _, c := range categoryLabels {
		out[LevelWords(c)] = true
	}
	return out
}()

// IsOccupationalCategory reports whether a row label names an
// occupational category of the old EEA tables (categoryLabels), numbered
// or not.
func IsOccupationalCategory(text string) bool {
	return categoryWords[LevelWords(Unnumbered(text))]
}

// CategoryAdvice is what the reader says of a row by category.
const CategoryAdvice = "an EE plan counts employees by occupational level (Top management, Senior management, Professionally qualified / middle management, Skilled technical / junior management, Semi-skilled, Unskilled), and a table by the old occupational categories is never matched to levels: copy the plan's figures by level"

// reJobGrade is a job grade as HR systems write them: a Paterson band
// (A to F, alone or with Upper/Lower or a number: "F", "D Upper", "C3",
// "C-3"), a Peromnes grade ("P10"), or a grade or band named so ("Grade
// 12", "Band D").
var reJobGrade = regexp.MustCompile(`(?i)^(?:paterson\s+)?(?:(?:grade|band)\s+)?(?:[a-f](?:\s*-?\s*(?:upper|lower|u|l|[1-5]))?|p\s*-?\s*\d{1,2}|\d{1,2}[a-f]?)$`)

// IsJobGrade reports whether a row label is a job grade (reJobGrade): "D
// Upper", "C3", "Grade 12". A bare number is one only when named a grade
// or band.
func IsJobGrade(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" || len(t) > 24 || !reJobGrade.MatchString(t) {
		return false
	}
	bare := strings.Trim(t, "0123456789 ")
	return bare != "" // "12" alone is no grade
}

// JobGradeAdvice is what the reader says of a job grade in a level column.
const JobGradeAdvice = "teach eepipe which occupational level each grade is in a mapping file given with --map (or map: in the configuration): under levels: for a grid's level column (levels: top_managers: [F]), under grades: for a roster (grades: F: top_managers); see docs/formats.md, the mapping file"

// levelColumnNames are the names of a grid's level column ("Occupational
// level"), which pandas writes on a row of its own below a two-row header.
var levelColumnNames = map[string]bool{
	"occupational level": true, "occupational levels": true, "level": true, "levels": true,
	"occupation level": true, "occupational level category": true,
}

// IsLevelColumnName reports whether a cell names the level column of a
// grid ("Occupational level"), not a level.
func IsLevelColumnName(text string) bool { return levelColumnNames[Normalize(text)] }
