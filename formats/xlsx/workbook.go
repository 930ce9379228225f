package xlsx

import (
	"io"

	"github.com/xuri/excelize/v2"
)

// Workbook is what WriteWorkbook saves: an excelize File or a
// GridWorkbook.
type Workbook interface {
	WriteTo(w io.Writer, opts ...excelize.Options) (int64, error)
}

// WriteWorkbook saves a workbook to path through WriteFileAtomic.
func WriteWorkbook(path string, f Workbook) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

func StrPtr(s string) *string { return &s }

func BoolPtr(b bool) *bool { return &b }
