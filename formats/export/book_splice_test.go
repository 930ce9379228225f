package export

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// bsBook is a workbook as the export's File has it: a first sheet with a
// name of its own, the sheets after the plan sheets (one hidden, one
// active with a name of its own); plans, when not nil, are added with
// excelize after the first sheet, with their print titles, as the export
// did before it added them itself.
func bsBook(t *testing.T, plans []string) map[string]string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", "Overview"))
	must(f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", Scope: "Overview", RefersTo: "'Overview'!$4:$4"}))
	for _, p := range plans {
		_, err := f.NewSheet(p)
		must(err)
	}
	for _, s := range []string{"Chart data", "Lists", "Later"} {
		_, err := f.NewSheet(s)
		must(err)
	}
	must(f.SetSheetVisible("Chart data", false))
	must(f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", Scope: "Later", RefersTo: "'Later'!$1:$1"}))
	idx, err := f.GetSheetIndex("Later")
	must(err)
	f.SetActiveSheet(idx)
	for _, p := range plans {
		must(f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", Scope: p, RefersTo: templates.PlanPrintTitles(p)}))
	}
	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	must(err)
	return chParts(t, buf.Bytes())
}

// TestPlanSheetsAddedAsExcelize: the plan sheets the package writer adds
// to the workbook part, its relationships and the content types are what
// excelize writes when they are added as sheets: the same sheet elements,
// ids and worksheet parts, the sheets after them and their names, the
// active tab and the hidden sheet moved on; only the relationship ids
// differ.
func TestPlanSheetsAddedAsExcelize(t *testing.T) {
	plans := []string{"Acme 2026", `A <&> "b" 'c' x`, "Plan 3"}
	want := bsBook(t, plans)
	skel := bsBook(t, nil)
	book, err := addPlanSheets(skel[workbookPart], skel[relsPath(workbookPart)], plans, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rid := regexp.MustCompile(` (r:id|Id)="rId\d+"`)
	noIDs := func(s string) string { return rid.ReplaceAllString(s, "") }
	// excelize orders the names by sheet.
	names := regexp.MustCompile(`<definedName [^>]*>[^<]*</definedName>`)
	sorted := func(re *regexp.Regexp, s string) string {
		m := re.FindAllString(noIDs(s), -1)
		slices.Sort(m)
		return strings.Join(m, "\n")
	}
	if got, w := names.ReplaceAllString(noIDs(book.workbook), ""), names.ReplaceAllString(noIDs(want[workbookPart]), ""); got != w {
		t.Errorf("workbook part:\n got %s\nwant %s", got, w)
	}
	if got, w := sorted(names, book.workbook), sorted(names, want[workbookPart]); got != w {
		t.Errorf("names:\n got %s\nwant %s", got, w)
	}
	rels := regexp.MustCompile(`<Relationship [^>]*>`)
	if got, w := sorted(rels, book.rels), sorted(rels, want[relsPath(workbookPart)]); got != w {
		t.Errorf("relationships:\n got %s\nwant %s", got, w)
	}
	var overrides strings.Builder
	for _, p := range book.parts {
		overrides.WriteString(`<Override PartName="/` + p + `" ContentType="` + worksheetContentType + `"></Override>`)
	}
	over := regexp.MustCompile(`<Override [^>]*>`)
	if got, w := sorted(over, book.partRefs(skel[contentTypesPart])+overrides.String()), sorted(over, want[contentTypesPart]); got != w {
		t.Errorf("content types:\n got %s\nwant %s", got, w)
	}
	// The skeleton's parts keep their content under their new names.
	for name, part := range skel {
		if n := book.part(name); strings.HasPrefix(name, "xl/worksheets/") && want[n] != part {
			t.Errorf("%s as %s: %s, want %s", name, n, part, want[n])
		}
	}
}

// TestSheetUnderPlanSheetNameRefused: a sheet added to the export's File
// under a plan sheet's name (in other letter case) is refused when the
// workbook is written, not written twice.
func TestSheetUnderPlanSheetNameRefused(t *testing.T) {
	in := pipeline.FromServer(chStoredPlan(7, "Acme 2026", "2026-09-01", 2), pipeline.CompanyIDs{VAT: "0412345678"})
	wb, err := NewWorkbook([]Plan{{Plan: in}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if _, err := wb.File.NewSheet("ACME 2026"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := wb.WriteTo(&buf); err == nil || !strings.Contains(err.Error(), "sheet Acme 2026: a sheet of that name") {
		t.Fatalf("err = %v", err)
	}
}
