package table

import (
	"errors"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx"
)

// TestCSVBoundIsOversized: a CSV line or record past its bound is an
// oversized file, as a workbook past its limits is.
func TestCSVBoundIsOversized(t *testing.T) {
	if !errors.Is(&csvLimitError{}, xlsx.ErrOversized) {
		t.Fatal("a CSV bound is not an oversized file")
	}
}
