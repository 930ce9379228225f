package reports

// The workbook checks of the package's own tests, for its external tests
// (package reports_test).
var (
	RawFillColor        = rawFillColor
	CheckOneTabSelected = checkOneTabSelected
)
