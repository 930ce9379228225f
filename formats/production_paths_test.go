package formats

import (
	"strings"

	"github.com/xuri/excelize/v2"
)

// The tests write and read files through the paths the binary takes; these
// helpers only put those paths' steps together.

// commentText is the plain text of a comment of a workbook read back.
func commentText(c excelize.Comment) string {
	if len(c.Paragraph) == 0 {
		return c.Text
	}
	var b strings.Builder
	for _, p := range c.Paragraph {
		b.WriteString(p.Text)
	}
	return b.String()
}
