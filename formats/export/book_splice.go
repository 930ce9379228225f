package export

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/templates"
)

// The plan sheets are not sheets of the excelize File (each NewSheet
// lists every sheet, quadratic over thousands): the package writer adds
// them to the workbook part, its relationships and the content types as
// excelize would have, at the place grid.Build.At records: a sheet
// element, a worksheet relationship, a worksheet part and the print
// titles name each, the sheets after them, their parts and their names
// numbered on past them, as if they had been added in that order.

// planBook is the workbook part and its relationships with the plan
// sheets added, each plan sheet's worksheet part, how many sheets come
// before them, and how many drawings and charts they have: the
// skeleton's drawings and charts are numbered past theirs.
type planBook struct {
	workbook, rels   string
	parts            []string
	at               int
	drawings, charts int
}

var (
	sheetElement     = regexp.MustCompile(`<sheet [^>]*?(?:/>|></sheet>)`)
	sheetIDAttr      = regexp.MustCompile(` sheetId="(\d+)"`)
	localSheetIDAttr = regexp.MustCompile(` localSheetId="(\d+)"`)
	viewTabAttr      = regexp.MustCompile(` (activeTab|firstSheet)="(\d+)"`)
	relIDAttr        = regexp.MustCompile(` Id="rId(\d+)"`)
	numberedPart     = regexp.MustCompile(`^xl/(?:worksheets|drawings|charts)/(?:_rels/)?(sheet|drawing|chart)(\d+)\.xml(?:\.rels)?$`)
	numberedPartRef  = regexp.MustCompile(`((?:Target="(?:\.\./)?|PartName="/xl/)(?:worksheets|drawings|charts)/)(sheet|drawing|chart)(\d+)\.xml"`)
)

const (
	worksheetContentType = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
	relWorksheet         = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"
)

// number returns the number in the output of the skeleton's part kind
// (sheet, drawing, chart) numbered k.
func (b *planBook) number(kind string, k int) int {
	switch {
	case kind == "drawing":
		return k + b.drawings
	case kind == "chart":
		return k + b.charts
	case k > b.at:
		return k + len(b.parts)
	}
	return k
}

// part returns the name in the output of the skeleton's part name: a
// worksheet part (or its relationships) numbered past the plan sheets'
// place is numbered past the plan sheets, a drawing or chart past
// theirs.
func (b *planBook) part(name string) string {
	m := numberedPart.FindStringSubmatchIndex(name)
	if m == nil {
		return name
	}
	k, _ := strconv.Atoi(name[m[4]:m[5]])
	return name[:m[4]] + strconv.Itoa(b.number(name[m[2]:m[3]], k)) + name[m[5]:]
}

// partRefs returns s (relationships, the content types) with its
// references to worksheet, drawing and chart parts renamed as part does.
func (b *planBook) partRefs(s string) string {
	return numberedPartRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := numberedPartRef.FindStringSubmatch(m)
		k, _ := strconv.Atoi(sub[3])
		return sub[1] + sub[2] + strconv.Itoa(b.number(sub[2], k)) + `.xml"`
	})
}

// addPlanSheets returns the workbook part x and its relationships rels
// (both as excelize wrote them) with the sheets names inserted before the
// at-th sheet: each with the sheet id, worksheet part and local print
// titles name the at+i-th sheet would have, and a new relationship; the
// sheets from the at-th on, their ids, parts, local names and the book
// view's active and first tab follow them.
func addPlanSheets(x, rels string, names []string, at, drawings, charts int) (*planBook, error) {
	start := strings.Index(x, "<sheets>")
	end := strings.Index(x, "</sheets>")
	if start < 0 || end < start {
		return nil, fmt.Errorf("xl/workbook.xml: no sheets")
	}
	sheets := sheetElement.FindAllStringIndex(x[start:end], -1)
	if at < 0 || at > len(sheets) {
		return nil, fmt.Errorf("xl/workbook.xml: %d sheets, the plan sheets go at %d", len(sheets), at)
	}
	insert := end
	if at < len(sheets) {
		insert = start + sheets[at][0]
	}
	lastRel := 0
	for _, m := range relIDAttr.FindAllStringSubmatch(rels, -1) {
		n, _ := strconv.Atoi(m[1])
		lastRel = max(lastRel, n)
	}
	relsEnd := strings.LastIndex(rels, "</Relationships>")
	if relsEnd < 0 {
		return nil, fmt.Errorf("xl/_rels/workbook.xml.rels: no </Relationships>")
	}
	n := len(names)
	out := &planBook{parts: make([]string, n), at: at, drawings: drawings, charts: charts}
	var sb, rb, nb strings.Builder
	for i, name := range names {
		rid := "rId" + strconv.Itoa(lastRel+1+i)
		out.parts[i] = "xl/worksheets/sheet" + strconv.Itoa(at+1+i) + ".xml"
		sb.WriteString(`<sheet name="`)
		escapeXML(&sb, name)
		sb.WriteString(`" sheetId="` + strconv.Itoa(at+1+i) + `" r:id="` + rid + `"></sheet>`)
		rb.WriteString(`<Relationship Id="` + rid + `" Target="` + strings.TrimPrefix(out.parts[i], "xl/") + `" Type="` + relWorksheet + `"></Relationship>`)
		nb.WriteString(`<definedName localSheetId="` + strconv.Itoa(at+i) + `" name="_xlnm.Print_Titles">`)
		escapeXML(&nb, templates.PlanPrintTitles(name))
		nb.WriteString(`</definedName>`)
	}
	out.rels = out.partRefs(rels[:relsEnd]) + rb.String() + rels[relsEnd:]
	// shift moves the numbers in group of re's matches in s from least on
	// past the plan sheets.
	shift := func(re *regexp.Regexp, s string, group, least int) string {
		return re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatchIndex(m)
			v, _ := strconv.Atoi(m[sub[2*group]:sub[2*group+1]])
			if v < least {
				return m
			}
			return m[:sub[2*group]] + strconv.Itoa(v+n) + m[sub[2*group+1]:]
		})
	}
	head := x[:start]
	if views := strings.Index(head, "<bookViews>"); views >= 0 {
		head = head[:views] + shift(viewTabAttr, head[views:], 2, at)
	}
	before, after := shift(sheetIDAttr, x[start:insert], 1, at+1), shift(sheetIDAttr, x[insert:end], 1, at+1)
	rest := x[end:]
	if n > 0 {
		rest = insertPlanNames(shift(localSheetIDAttr, rest, 1, at), at, nb.String())
	}
	out.workbook = head + before + sb.String() + after + rest
	return out, nil
}

// insertPlanNames returns the workbook part from </sheets> on (shifted:
// its local names already moved past the plan sheets) with the plan
// sheets' names (the definedName elements names) after the names local
// to the sheets before them.
func insertPlanNames(shifted string, at int, names string) string {
	start := strings.Index(shifted, "<definedNames>")
	end := strings.Index(shifted, "</definedNames>")
	if start < 0 || end < start {
		after := len("</sheets>")
		return shifted[:after] + "<definedNames>" + names + "</definedNames>" + shifted[after:]
	}
	// The first name local to a sheet after the plan sheets: its index
	// was moved, so it is at + len(plans) or more.
	insert := end
	for _, m := range localSheetIDAttr.FindAllStringSubmatchIndex(shifted[start:end], -1) {
		if v, _ := strconv.Atoi(shifted[start+m[2] : start+m[3]]); v >= at {
			insert = strings.LastIndex(shifted[:start+m[0]], "<definedName ")
			break
		}
	}
	return shifted[:insert] + names + shifted[insert:]
}

// escapeXML writes s escaped as encoding/xml (excelize) escapes text and
// attribute values.
func escapeXML(b *strings.Builder, s string) {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(s))
	b.Write(buf.Bytes())
}
