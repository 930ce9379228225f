package pipeline

// Flat table column names. Every reader (flat and grid) uses these as the
// keys of Record.Cells, next to the counter names of the catalog.
const (
	ColAccount             = "account"
	ColCompanyVAT          = "company_vat_number"
	ColCompanyRegistration = "company_registration_number"
	ColCompanyIDNumber     = "company_id_number"
	ColPlanID              = "plan_id"
	ColPlanName            = "plan_name"
	ColStartDate           = "start_date"
	ColEndDate             = "end_date"
	ColSector              = "sector"
	ColScorecardID         = "scorecard_id"
	ColYearNumber          = "year_number"
	ColFinancialYear       = "financial_year"
	ColTargetType          = "target_type"
	// ColSection is a reader's mark of a record that is not a target:
	// SectionBaseline, form EEA13's workforce profile (docs/formats.md,
	// EEA13 sections). No file has such a column.
	ColSection      = "section"
	SectionBaseline = "baseline"
)

// FlatColumns lists the flat table's non-counter columns in the order the
// writers use.
var FlatColumns = []string{
	ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber,
	ColPlanID, ColPlanName, ColStartDate, ColEndDate, ColSector, ColScorecardID,
	ColYearNumber, ColFinancialYear, ColTargetType, ColAccount,
}

// IsFlatColumn reports whether name is one of FlatColumns.
func IsFlatColumn(name string) bool { return Contains(FlatColumns, name) }

// asmPlanColumns are the columns that describe the plan rather than a row.
var PlanColumns = [NumPlanColumns]string{ColAccount, ColCompanyVAT, ColCompanyRegistration, ColCompanyIDNumber, ColPlanID, ColPlanName, ColStartDate, ColEndDate, ColSector, ColScorecardID}

const NumPlanColumns = 10
