package reports

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// update rewrites the golden files under testdata (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// acceptanceDir holds the acceptance fixtures: workbooks other programs
// wrote (testdata/acceptance).
const acceptanceDir = "../../testdata/acceptance"

// date is a shorthand for a date literal.
func date(s string) pipeline.Date {
	d, err := pipeline.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// readChangeSet reads a whole change set file through the streaming
// reader apply uses (ChangeSetFile), signature checked.
func readChangeSet(path string) (*savedset.SavedChangeSet, error) {
	var plans []savedset.SavedPlan
	s, err := (&ChangeSetFile{Path: path}).Read(func(_ *savedset.SavedChangeSet, _ int, p *savedset.SavedPlan, _ [sha256.Size]byte) error {
		plans = append(plans, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Plans = plans
	return s, nil
}

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

// rawFillColor returns the pattern colour of the cell style idx as the
// style sheet spells it, six hex digits.
func rawFillColor(f *excelize.File, idx int) string {
	if _, err := f.GetStyle(idx); err != nil { // loads the style sheet
		return ""
	}
	ss := f.Styles
	if ss == nil || ss.CellXfs == nil || ss.Fills == nil || idx < 0 || idx >= len(ss.CellXfs.Xf) {
		return ""
	}
	id := ss.CellXfs.Xf[idx].FillID
	if id == nil || *id < 0 || *id >= len(ss.Fills.Fill) || ss.Fills.Fill[*id] == nil || ss.Fills.Fill[*id].PatternFill == nil {
		return ""
	}
	c := ss.Fills.Fill[*id].PatternFill.FgColor
	if c == nil {
		return ""
	}
	return xlsx.StyleRGB(f.GetBaseColor(c.RGB, c.Indexed, c.Theme))
}

// checkOneTabSelected checks that sheet is the workbook's active sheet and
// the only one whose tab is selected (two selected tabs are a group, which
// an edit changes together).
func checkOneTabSelected(t *testing.T, path, sheet string) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetName(f.GetActiveSheetIndex()); got != sheet {
		t.Errorf("active sheet %q, want %q", got, sheet)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	book, err := xlsx.Open(fh, st.Size(), xlsx.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// A sheet's first sheetView, before its cells, says whether its tab
	// is selected.
	tabSelected := regexp.MustCompile(`<sheetView\b[^>]*\btabSelected="(1|true)"`)
	var selected []string
	for _, info := range book.Sheets {
		if info.Path == "" {
			continue // a chart sheet
		}
		rc, err := book.Open(info.Path)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := bytes.Cut(raw, []byte("<sheetData"))
		if tabSelected.Match(head) {
			selected = append(selected, info.Name)
		}
	}
	if len(selected) > 1 || (len(selected) == 1 && selected[0] != sheet) {
		t.Errorf("tabs selected: %v; want only %q", selected, sheet)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
