package profile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// Vocabulary says what a roster's race, gender and level words mean: the
// built-in vocabulary and a mapping file's spellings (formats/roster.Words
// gives one). Each returns a name of the default catalog: a race of
// pipeline.Races, a gender, an occupational level; Grade a level for a job
// grade the mapping file teaches (the EEA9 table, Grade, is consulted
// after it).
type Vocabulary interface {
	Race(s string) (string, bool)
	Gender(s string) (string, bool)
	Level(s string) (string, bool)
	Grade(s string) (string, bool)
	// Fold folds a cell for matching as labels are folded
	// (templates.Normalize): lower case, runs of other characters than
	// letters and digits one space.
	Fold(s string) string
}

// Employee is one roster row as read: where it is and the text of each of
// its columns, by the index of the column's name in pipeline.RosterColumns
// ("" for a blank cell or a column the roster does not have).
type Employee struct {
	File   string
	Row    int
	Values [NumColumns]string
}

// NumColumns is the number of roster columns (pipeline.RosterColumns).
const NumColumns = 9

// Indexes of Employee.Values, in the order of pipeline.RosterColumns.
const (
	ColNumber = iota
	ColRace
	ColGender
	ColLevel
	ColGrade
	ColDisability
	ColNationality
	ColForeign
	ColEmploymentType
)

// classified is an employee ready to count.
type classified struct {
	race, gender, level string
	disabled, temporary bool
}

// classify reads an employee's cells, or says why the row cannot be
// counted.
func (c *Counter) classify(e *Employee) (classified, string) {
	var out classified
	race, why := c.word(e.Values[ColRace], "race", c.vocab.Race, raceWords)
	if why != "" {
		return out, why
	}
	gender, why := c.word(e.Values[ColGender], "gender", c.vocab.Gender, genderWords)
	if why != "" {
		return out, why
	}
	level, why := c.level(e)
	if why != "" {
		return out, why
	}
	out.race, out.gender, out.level = race, gender, level
	var ok bool
	if out.disabled, ok = yesNo(c.fold(e.Values[ColDisability]), "disabled"); !ok {
		return out, fmt.Sprintf("disability %q is not yes or no (Yes/No, Y/N, true/false, 1/0, Disabled)", strings.TrimSpace(e.Values[ColDisability]))
	}
	foreign, why := c.foreign(e)
	if why != "" {
		return out, why
	}
	if foreign {
		out.race = "foreign"
	}
	if out.temporary, ok = temporaryType(c.fold(e.Values[ColEmploymentType])); !ok {
		return out, fmt.Sprintf("employment type %q is not Permanent, Temporary, Fixed term, Contract or Casual", strings.TrimSpace(e.Values[ColEmploymentType]))
	}
	return out, ""
}

// raceWords and genderWords are the names a race and a gender cell may
// give (a race cell may say the employee is a foreign national).
var (
	raceWords   = pipeline.Races
	genderWords = pipeline.Genders
)

// word reads a race or gender cell through the vocabulary.
func (c *Counter) word(text, what string, look func(string) (string, bool), names []string) (string, string) {
	t := strings.TrimSpace(text)
	if t == "" {
		return "", "no " + what
	}
	if name, ok := look(t); ok && slices.Contains(names, name) {
		return name, ""
	}
	return "", fmt.Sprintf("%s %q is not known (%s; a mapping file's %ss teach other words)", what, t, knownWords(what), what)
}

func knownWords(what string) string {
	if what == "race" {
		return "African, Coloured, Indian, White, or the codes A, C, I, W"
	}
	return "Male, Female, M, F"
}

// level reads the occupational level and the job grade: either gives the
// level; both must agree.
func (c *Counter) level(e *Employee) (string, string) {
	lt, gt := strings.TrimSpace(e.Values[ColLevel]), strings.TrimSpace(e.Values[ColGrade])
	var fromLevel, fromGrade string
	if lt != "" {
		l, ok := c.vocab.Level(lt)
		if !ok || !slices.Contains(pipeline.OccupationalLevels, l) {
			return "", fmt.Sprintf("occupational level %q is not one of the six levels (top, senior, middle, junior management, semi-skilled, unskilled)", lt)
		}
		fromLevel = l
	}
	if gt != "" {
		l, ok := c.vocab.Grade(gt)
		if !ok {
			l, ok = Grade(c.fold(gt))
		}
		if !ok {
			return "", fmt.Sprintf("job grade %q is not a Paterson grade (A1-F5, F+, G, or A, B Lower ... F Upper); map other gradings to levels in a mapping file's grades", gt)
		}
		fromGrade = l
	}
	switch {
	case fromLevel == "" && fromGrade == "":
		return "", "no occupational level or job grade"
	case fromLevel != "" && fromGrade != "" && fromLevel != fromGrade:
		return "", fmt.Sprintf("occupational level %q (%s) and job grade %q (%s) disagree", lt, fromLevel, gt, fromGrade)
	case fromLevel != "":
		return fromLevel, ""
	}
	return fromGrade, ""
}

// foreign reads the nationality and the foreign-national flag: an employee
// is a foreign national when the flag says so or the nationality is not
// South African. A blank cell (or a column the roster lacks) says nothing.
func (c *Counter) foreign(e *Employee) (bool, string) {
	flag, ok := yesNo(c.fold(e.Values[ColForeign]), "foreign", "foreign national")
	if !ok {
		return false, fmt.Sprintf("foreign national %q is not yes or no", strings.TrimSpace(e.Values[ColForeign]))
	}
	nat := c.fold(e.Values[ColNationality])
	return flag || (nat != "" && !southAfrican[nat]), ""
}

// southAfrican are the nationality and citizenship cells of a South African
// citizen, folded.
var southAfrican = map[string]bool{
	"south african": true, "south africa": true, "sa": true, "rsa": true, "za": true, "zaf": true,
	"south african citizen": true, "sa citizen": true, "rsa citizen": true, "citizen": true,
	"republic of south africa": true, "south african national": true,
}

// yesNo reads a yes/no cell, folded, or one of the column's own words for
// yes; a blank cell is no.
func yesNo(folded string, yesWords ...string) (yes, ok bool) {
	switch folded {
	case "yes", "y", "true", "1":
		return true, true
	case "", "no", "n", "false", "0", "none":
		return false, true
	}
	return slices.Contains(yesWords, folded), slices.Contains(yesWords, folded)
}

// temporaryType reads an employment type cell, folded: Temporary, Fixed
// term, Contract and Casual are temporary; Permanent (full or part time)
// and a blank cell are permanent.
func temporaryType(folded string) (temporary, ok bool) {
	switch folded {
	case "", "permanent", "permanent full time", "permanent part time", "full time", "part time", "perm":
		return false, true
	case "temporary", "temp", "fixed term", "fixed term contract", "contract", "contractor", "casual":
		return true, true
	}
	return false, false
}
