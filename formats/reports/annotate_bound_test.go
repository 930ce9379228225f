package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx/xlsxtest"
)

// TestAnnotateSparseRowsRefused: validate --annotate hands a workbook to
// excelize, which holds every row it touches up to its last cell; a sheet
// whose rows spread over more than grid.MaxTextSlots cells (here 300 rows
// of one cell in column XFD, 4.9 million) is not annotated.
func TestAnnotateSparseRowsRefused(t *testing.T) {
	var b strings.Builder
	for r := 1; r <= 300; r++ {
		fmt.Fprintf(&b, `<row r="%d"><c r="XFD%d" t="inlineStr"><is><t>x</t></is></c></row>`, r, r)
	}
	path := xlsxtest.SheetData(t, "sparse.xlsx", b.String())
	dst := filepath.Join(t.TempDir(), "annotated.xlsx")
	if _, err := AnnotateWorkbook(path, dst, nil); !errors.Is(err, ErrNotAnnotatable) || !strings.Contains(err.Error(), "spread over more than") {
		t.Errorf("AnnotateWorkbook(sparse rows) = %v, want ErrNotAnnotatable for rows spread too wide", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("a copy was written: %v", err)
	}
}
