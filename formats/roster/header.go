package roster

import (
	"fmt"
	"strings"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/profile"
	"github.com/eepipe/eepipe/templates"
)

// headerNames are the header names payroll exports give each roster
// column, folded by templates.Normalize; the column's own name
// (pipeline.RosterColumns) is read too.
var headerNames = map[string][]string{
	pipeline.RosterEmployeeNumber: {"Employee Number", "Employee Code", "Employee No", "Employee Nr", "Emp No", "Emp Code",
		"Employee ID", "Staff Number", "Staff No", "Personnel Number"},
	pipeline.RosterRace:            {"Race", "Population Group", "Race Group", "Equity Race"},
	pipeline.RosterGender:          {"Gender", "Sex"},
	pipeline.RosterLevel:           {"Occupational Level", "Occupation Level", "EE Occupational Level", "EEA Occupational Level", "Occupational Levels"},
	pipeline.RosterGrade:           {"Grade", "Paterson Grade", "Job Grade", "Paterson Band", "Paterson", "Job Grading"},
	pipeline.RosterDisability:      {"Disabled", "Disability", "Disability Status", "Person with Disability"},
	pipeline.RosterNationality:     {"Nationality", "Citizenship", "Citizenship Status"},
	pipeline.RosterForeignNational: {"Foreign National", "Foreigner", "Is Foreign National"},
	pipeline.RosterEmploymentType:  {"Employment Type", "Type of Employment", "Employee Type", "Employment Status"},
}

// headerIndex maps a folded header to its roster column's index.
var headerIndex = func() map[string]int {
	out := map[string]int{}
	for i, col := range pipeline.RosterColumns {
		out[templates.Normalize(col)] = i
		for _, h := range headerNames[col] {
			out[templates.Normalize(h)] = i
		}
	}
	return out
}()

// Columns is where a roster's columns are: by index of
// pipeline.RosterColumns, the 0-based field, or -1 when the roster does
// not have the column.
type Columns [profile.NumColumns]int

// column returns the roster column a header names: the mapping file's
// columns first (a client's own header), then the payroll names.
func column(header string, m *mapping.File) (int, bool) {
	if name, ok := m.Column(header); ok {
		for i, col := range pipeline.RosterColumns {
			if col == name {
				return i, true
			}
		}
	}
	i, ok := headerIndex[templates.Normalize(header)]
	return i, ok
}

// headerColumns reads a row as a header: where each roster column is (the
// first header naming it), and whether the row is a roster's header (it
// names race, gender and a level or a grade).
func headerColumns(fields []string, m *mapping.File) (Columns, bool) {
	var cols Columns
	for i := range cols {
		cols[i] = -1
	}
	for f, h := range fields {
		if i, ok := column(strings.TrimSpace(h), m); ok && cols[i] < 0 {
			cols[i] = f
		}
	}
	return cols, cols.isRoster()
}

func (c Columns) isRoster() bool {
	return c[profile.ColRace] >= 0 && c[profile.ColGender] >= 0 && (c[profile.ColLevel] >= 0 || c[profile.ColGrade] >= 0)
}

// missing names the columns a roster needs that c lacks.
func (c Columns) missing() []string {
	var out []string
	if c[profile.ColRace] < 0 {
		out = append(out, "race (Race, Population Group)")
	}
	if c[profile.ColGender] < 0 {
		out = append(out, "gender (Gender, Sex)")
	}
	if c[profile.ColLevel] < 0 && c[profile.ColGrade] < 0 {
		out = append(out, "an occupational level or a job grade (Occupational Level; Grade, Paterson Grade, Job Grade)")
	}
	return out
}

// NotRosterError is a file that is not a roster: no header row in its
// first rows names the columns a roster needs.
type NotRosterError struct {
	File string
	// Missing names the columns the best header row lacks.
	Missing []string
}

func (e *NotRosterError) Error() string {
	return fmt.Sprintf("%s: not a roster: no header row in the first %d rows names %s; name the columns as the payroll export does, or map the client's headers in a mapping file's columns (--map)",
		e.File, headerRows, strings.Join(e.Missing, ", "))
}

// headerRows is how many rows of a file are looked at for its header.
const headerRows = 20
