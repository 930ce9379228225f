package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// rewriteWorkbook adds the Summary and Changes sheets before the
// workbook's own, makes the Summary the active tab, adds their defined
// names and moves the workbook's sheet-scoped names (print areas and
// titles, filters) with their sheets.
func (c *streamedCopy) rewriteWorkbook(b []byte) ([]byte, error) {
	if bytes.Contains(b, []byte("purl.oclc.org")) {
		return nil, leftToExcelize() // strict OOXML
	}
	w, err := scanWorkbook(b)
	if err != nil {
		return nil, err
	}
	var edits []partEdit
	// The Summary, first, is the active tab and the first tab shown.
	if w.viewStart >= 0 {
		tag := delAttr(setAttr(b[w.viewStart:w.viewEnd], "activeTab", "0"), "firstSheet")
		edits = append(edits, partEdit{w.viewStart, w.viewEnd, tag})
	} else {
		edits = append(edits, partEdit{w.sheetsStart, w.sheetsStart, []byte(`<bookViews><workbookView activeTab="0"/></bookViews>`)})
	}
	// The workbook's sheet-scoped names follow their sheets.
	for _, sp := range w.scoped {
		tag := b[sp[0]:sp[1]]
		v, _ := getAttr(tag, "localSheetId")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, leftToExcelize()
		}
		edits = append(edits, partEdit{sp[0], sp[1], setAttr(tag, "localSheetId", strconv.Itoa(n+len(c.added)))})
	}
	// The relationship prefix is declared on the element: openpyxl
	// declares it on each sheet element, not on the workbook.
	var sheets bytes.Buffer
	for i, a := range c.added {
		fmt.Fprintf(&sheets, `<sheet name="%s" sheetId="%d" xmlns:r="%s" r:id="%s"/>`, xmlAttr(a.name), w.maxID+1+i, nsRel, xmlAttr(a.rid))
	}
	edits = append(edits, partEdit{w.sheetsTagEnd, w.sheetsTagEnd, sheets.Bytes()})
	if len(c.addedNames) > 0 {
		switch {
		case w.namesEnd >= 0 && w.namesEnd == w.namesTagEnd && bytes.HasSuffix(b[w.namesStart:w.namesTagEnd], []byte("/>")):
			edits = append(edits, partEdit{w.namesStart, w.namesTagEnd, slices.Concat([]byte("<definedNames>"), c.addedNames, []byte("</definedNames>"))})
		case w.namesEnd >= 0:
			edits = append(edits, partEdit{w.namesEnd, w.namesEnd, c.addedNames})
		default:
			at := w.rootClose
			if w.afterNames >= 0 {
				at = w.afterNames
			}
			edits = append(edits, partEdit{at, at, slices.Concat([]byte("<definedNames>"), c.addedNames, []byte("</definedNames>"))})
		}
	}
	return applyEdits(b, edits), nil
}

// workbookScan is where the parts of a workbook part the copy edits
// are: byte offsets into it, -1 when absent.
type workbookScan struct {
	sheetsStart, sheetsTagEnd, namesStart, namesTagEnd, namesEnd int
	afterNames, viewStart, viewEnd, rootClose                    int
	maxID                                                        int      // the highest sheetId
	scoped                                                       [][2]int // definedName start tags with a localSheetId
}

// scanWorkbook reads a workbook part, keeping where its sheets, book
// view and defined names are; a workbook it does not understand is
// leftToExcelize.
func scanWorkbook(b []byte) (*workbookScan, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var (
		depth                                     int
		cur                                       string
		rootEnd, sheetsStart, sheetsEnd, namesEnd = -1, -1, -1, -1
		afterNames, viewStart, viewEnd, rootClose = -1, -1, -1, -1
		maxID                                     int
		sawSheet, sawBookViews                    bool
		namesStart, namesTagEnd                   = -1, -1
		sheetsTagEnd                              = -1
		scoped                                    [][2]int // definedName start tags with a localSheetId
	)
	late := map[string]bool{"calcPr": true, "oleSize": true, "customWorkbookViews": true, "pivotCaches": true, "smartTagPr": true,
		"smartTagTypes": true, "webPublishing": true, "fileRecoveryPr": true, "webPublishObjects": true, "extLst": true}
	for {
		before := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, leftToExcelize()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			// A prefixed element of SpreadsheetML (x:sheets) is not
			// handled; those of other namespaces Excel writes among the
			// workbook's children (mc:AlternateContent holding the
			// file's path, xr:revisionPtr) are kept as they are.
			if t.Name.Space != "" && depth <= 3 && (depth == 1 || workbookNames[t.Name.Local] || late[t.Name.Local]) {
				return nil, leftToExcelize()
			}
			switch depth {
			case 1:
				rootEnd = int(d.InputOffset())
			case 2:
				cur = t.Name.Local
				switch cur {
				case "sheets":
					sheetsStart, sheetsTagEnd = before, int(d.InputOffset())
				case "bookViews":
					sawBookViews = true
				case "definedNames":
					namesStart, namesTagEnd = before, int(d.InputOffset())
				}
				if late[cur] && afterNames < 0 {
					afterNames = before
				}
			case 3:
				if cur == "bookViews" && t.Name.Local == "workbookView" && viewStart < 0 {
					viewStart, viewEnd = before, int(d.InputOffset())
				}
				if cur == "definedNames" && t.Name.Local == "definedName" {
					for _, a := range t.Attr {
						if a.Name.Local == "localSheetId" {
							scoped = append(scoped, [2]int{before, int(d.InputOffset())})
						}
					}
				}
				if cur == "sheets" && t.Name.Local == "sheet" {
					sawSheet = true
					for _, a := range t.Attr {
						switch a.Name.Local {
						case "sheetId":
							if n, err := strconv.Atoi(a.Value); err == nil {
								maxID = max(maxID, n)
							}
						}
					}
				}
			}
		case xml.EndElement:
			if depth == 2 {
				switch t.Name.Local {
				case "sheets":
					sheetsEnd = before
				case "definedNames":
					namesEnd = before
				}
			}
			if depth == 1 {
				rootClose = before
			}
			depth--
		}
	}
	if rootEnd < 0 || sheetsEnd < 0 || !sawSheet || rootClose < 0 || bytes.HasSuffix(b[:rootEnd], []byte("/>")) || (sawBookViews && viewStart < 0) ||
		sheetsTagEnd < 0 || bytes.HasSuffix(b[sheetsStart:sheetsTagEnd], []byte("/>")) {
		return nil, leftToExcelize()
	}
	return &workbookScan{sheetsStart: sheetsStart, sheetsTagEnd: sheetsTagEnd, namesStart: namesStart, namesTagEnd: namesTagEnd,
		namesEnd: namesEnd, afterNames: afterNames, viewStart: viewStart, viewEnd: viewEnd, rootClose: rootClose, maxID: maxID, scoped: scoped}, nil
}

// partEdit replaces b[at:end] of a part with text.
type partEdit struct {
	at, end int
	text    []byte
}

// applyEdits returns b with edits made, in the order of their places
// (edits at one place in the order given).
func applyEdits(b []byte, edits []partEdit) []byte {
	slices.SortStableFunc(edits, func(x, y partEdit) int { return x.at - y.at })
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(b[pos:e.at])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(b[pos:])
	return out.Bytes()
}

// workbookNames are the workbook's elements the copy reads or edits.
var workbookNames = map[string]bool{"workbook": true, "sheets": true, "sheet": true, "bookViews": true, "workbookView": true,
	"definedNames": true, "definedName": true}
