package xlsxtest

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// strictRGB is the colour openpyxl accepts: six or eight hex digits.
var strictRGB = regexp.MustCompile(`^[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$`)

// StrictProblems re-reads a written workbook more strictly than
// excelize does, with the checks openpyxl and LibreOffice make on opening a
// file: every part is well-formed XML, every part has a content type,
// every internal relationship leads to a part, every rgb colour has six or
// eight hex digits, the style sheet's counts and the ids its cell formats
// use are in range, and every cell's style index names a cell format. It
// returns what fails, one line each.
func StrictProblems(p string) []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	zr, err := zip.OpenReader(p)
	if err != nil {
		return []string{fmt.Sprintf("not a zip package: %v", err)}
	}
	defer zr.Close()
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		parts[f.Name] = f
	}
	read := func(name string) ([]byte, bool) {
		f, ok := parts[name]
		if !ok {
			return nil, false
		}
		rc, err := f.Open()
		if err != nil {
			fail("%s: %v", name, err)
			return nil, false
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			fail("%s: %v", name, err)
			return nil, false
		}
		return b, true
	}
	// Every XML part: well formed; every rgb attribute a colour.
	for _, f := range zr.File {
		ext := path.Ext(f.Name)
		if ext != ".xml" && ext != ".rels" && ext != ".vml" {
			continue
		}
		b, _ := read(f.Name)
		d := xml.NewDecoder(strings.NewReader(string(b)))
		d.Strict = ext != ".vml" // VML is the loose XML of old Office
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fail("%s: not well-formed XML: %v", f.Name, err)
				break
			}
			if se, ok := tok.(xml.StartElement); ok {
				for _, a := range se.Attr {
					if a.Name.Local == "rgb" && !strictRGB.MatchString(a.Value) {
						fail("%s: <%s rgb=%q>: a colour must have 6 or 8 hex digits", f.Name, se.Name.Local, a.Value)
					}
				}
			}
		}
	}
	// Content types.
	ct, ok := read("[Content_Types].xml")
	if !ok {
		fail("no [Content_Types].xml")
	} else {
		var types struct {
			Default []struct {
				Extension string `xml:"Extension,attr"`
			} `xml:"Default"`
			Override []struct {
				PartName string `xml:"PartName,attr"`
			} `xml:"Override"`
		}
		if err := xml.Unmarshal(ct, &types); err != nil {
			fail("[Content_Types].xml: %v", err)
		}
		exts, names := map[string]bool{}, map[string]bool{}
		for _, d := range types.Default {
			exts[strings.ToLower(d.Extension)] = true
		}
		for _, o := range types.Override {
			names[strings.TrimPrefix(o.PartName, "/")] = true
			if _, ok := parts[strings.TrimPrefix(o.PartName, "/")]; !ok {
				fail("[Content_Types].xml names the part %s, which the package lacks", o.PartName)
			}
		}
		for name := range parts {
			if name == "[Content_Types].xml" || strings.HasSuffix(name, "/") {
				continue
			}
			if !names[name] && !exts[strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))] {
				fail("%s has no content type", name)
			}
		}
	}
	// Relationships lead to parts.
	for name := range parts {
		if !strings.HasSuffix(name, ".rels") {
			continue
		}
		b, _ := read(name)
		var rels struct {
			Rel []struct {
				Target     string `xml:"Target,attr"`
				TargetMode string `xml:"TargetMode,attr"`
			} `xml:"Relationship"`
		}
		if err := xml.Unmarshal(b, &rels); err != nil {
			fail("%s: %v", name, err)
			continue
		}
		base := path.Dir(path.Dir(name)) // xl/_rels/workbook.xml.rels -> xl
		for _, r := range rels.Rel {
			if r.TargetMode == "External" {
				continue
			}
			target := r.Target
			if strings.HasPrefix(target, "/") {
				target = strings.TrimPrefix(target, "/")
			} else {
				target = path.Clean(path.Join(base, target))
			}
			if _, ok := parts[target]; !ok {
				fail("%s: relationship to %s, which the package lacks", name, r.Target)
			}
		}
	}
	// Styles: counts and ids.
	xfCount := -1
	if b, ok := read("xl/styles.xml"); ok {
		type counted struct {
			Count *int `xml:"count,attr"`
		}
		type xf struct {
			NumFmtID *int `xml:"numFmtId,attr"`
			FontID   *int `xml:"fontId,attr"`
			FillID   *int `xml:"fillId,attr"`
			BorderID *int `xml:"borderId,attr"`
			XfID     *int `xml:"xfId,attr"`
		}
		var ss struct {
			NumFmts struct {
				Count  *int `xml:"count,attr"`
				NumFmt []struct {
					ID int `xml:"numFmtId,attr"`
				} `xml:"numFmt"`
			} `xml:"numFmts"`
			Fonts        counted `xml:"fonts"`
			Fills        counted `xml:"fills"`
			Borders      counted `xml:"borders"`
			CellStyleXfs struct {
				Xf []xf `xml:"xf"`
			} `xml:"cellStyleXfs"`
			CellXfs struct {
				Count *int `xml:"count,attr"`
				Xf    []xf `xml:"xf"`
			} `xml:"cellXfs"`
		}
		if err := xml.Unmarshal(b, &ss); err != nil {
			fail("xl/styles.xml: %v", err)
		}
		// The children of fonts, fills and borders, counted by their tag.
		children := func(tag string) int {
			re := regexp.MustCompile(`(?s)<` + tag + `\b[^>]*?(/>|>(.*?)</` + tag + `>)`)
			m := re.FindSubmatch(b)
			if m == nil || len(m) < 3 {
				return 0
			}
			inner := string(m[2])
			child := strings.TrimSuffix(tag, "s")
			return len(regexp.MustCompile(`<`+child+`\b`).FindAllStringIndex(inner, -1))
		}
		nFonts, nFills, nBorders := children("fonts"), children("fills"), children("borders")
		for _, c := range []struct {
			name  string
			count *int
			n     int
		}{{"fonts", ss.Fonts.Count, nFonts}, {"fills", ss.Fills.Count, nFills}, {"borders", ss.Borders.Count, nBorders},
			{"cellXfs", ss.CellXfs.Count, len(ss.CellXfs.Xf)}, {"numFmts", ss.NumFmts.Count, len(ss.NumFmts.NumFmt)}} {
			if c.count != nil && *c.count != c.n {
				fail("xl/styles.xml: <%s count=\"%d\"> holds %d", c.name, *c.count, c.n)
			}
		}
		fmts := map[int]bool{}
		for _, n := range ss.NumFmts.NumFmt {
			fmts[n.ID] = true
		}
		for i, x := range ss.CellXfs.Xf {
			check := func(what string, id *int, n int) {
				if id != nil && (*id < 0 || *id >= n) {
					fail("xl/styles.xml: cellXfs xf %d: %s %d out of range (%d)", i, what, *id, n)
				}
			}
			check("fontId", x.FontID, nFonts)
			check("fillId", x.FillID, nFills)
			check("borderId", x.BorderID, nBorders)
			check("xfId", x.XfID, max(1, len(ss.CellStyleXfs.Xf)))
			if x.NumFmtID != nil && *x.NumFmtID >= 164 && !fmts[*x.NumFmtID] {
				fail("xl/styles.xml: cellXfs xf %d: numFmtId %d is not defined", i, *x.NumFmtID)
			}
		}
		xfCount = len(ss.CellXfs.Xf)
	}
	// Cells name existing cell formats.
	for name := range parts {
		if !strings.HasPrefix(name, "xl/worksheets/") || path.Ext(name) != ".xml" {
			continue
		}
		b, _ := read(name)
		d := xml.NewDecoder(strings.NewReader(string(b)))
		for {
			tok, err := d.Token()
			if err != nil {
				break
			}
			se, ok := tok.(xml.StartElement)
			if !ok || (se.Name.Local != "c" && se.Name.Local != "row" && se.Name.Local != "col") {
				continue
			}
			for _, a := range se.Attr {
				if a.Name.Local != "s" && a.Name.Local != "style" {
					continue
				}
				n, err := strconv.Atoi(a.Value)
				if err != nil || n < 0 || (xfCount >= 0 && n >= xfCount) {
					fail("%s: <%s %s=%q>: no such cell format (%d)", name, se.Name.Local, a.Name.Local, a.Value, xfCount)
				}
			}
		}
	}
	return out
}

// CheckStrict fails the test for every problem StrictProblems finds.
func CheckStrict(t testing.TB, p string) {
	t.Helper()
	for _, pr := range StrictProblems(p) {
		t.Errorf("%s: %s", path.Base(p), pr)
	}
}
