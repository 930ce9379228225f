package pipeline

// Roster column names: the columns of an HR roster (one row per employee)
// that eepipe profile reads, as a mapping file's columns key names them
// (docs/profile-and-propose.md, columns).
const (
	RosterEmployeeNumber  = "employee_number"
	RosterRace            = "race"
	RosterGender          = "gender"
	RosterLevel           = "occupational_level"
	RosterGrade           = "job_grade"
	RosterDisability      = "disability"
	RosterNationality     = "nationality"
	RosterForeignNational = "foreign_national"
	RosterEmploymentType  = "employment_type"
)

// RosterColumns lists the roster's columns in the order
// docs/profile-and-propose.md lists them.
var RosterColumns = []string{
	RosterEmployeeNumber, RosterRace, RosterGender, RosterLevel, RosterGrade,
	RosterDisability, RosterNationality, RosterForeignNational, RosterEmploymentType,
}
