package reports

// The package's unexported names and the workbook checks of its own
// tests that its external tests (package reports_test) use.
var (
	RawFillColor        = rawFillColor
	CheckOneTabSelected = checkOneTabSelected
	WriteSectorCSV      = writeSectorCSV
	SampleRunReport     = sampleRunReport
)

const (
	CheckPrintSheet  = checkPrintSheet
	SectorPrintScale = sectorPrintScale
)
