package reports

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/xlsx"
)

// attrSpan locates one attribute in a raw start tag.
type attrSpan struct {
	name             string
	start, end       int // the attribute with its leading space
	valStart, valEnd int
}

// tagAttrs lists the attributes of a raw start tag (<name a="1" ...>),
// which may be followed by the element's content, and returns the index
// of the tag's end ("/>" or ">").
func tagAttrs(tag []byte) ([]attrSpan, int) {
	var out []attrSpan
	i := 1
	for i < len(tag) && !xlsx.IsXMLSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	for i < len(tag) {
		start := i
		for i < len(tag) && xlsx.IsXMLSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] == '>' || tag[i] == '/' {
			return out, i
		}
		ns := i
		for i < len(tag) && tag[i] != '=' && !xlsx.IsXMLSpace(tag[i]) {
			i++
		}
		name := string(tag[ns:i])
		for i < len(tag) && tag[i] != '"' && tag[i] != '\'' {
			i++
		}
		if i >= len(tag) {
			return out, len(tag)
		}
		q := tag[i]
		vs := i + 1
		k := bytes.IndexByte(tag[vs:], q)
		if k < 0 {
			return out, len(tag)
		}
		out = append(out, attrSpan{name: name, start: start, end: vs + k + 1, valStart: vs, valEnd: vs + k})
		i = vs + k + 1
	}
	return out, len(tag)
}

func getAttr(tag []byte, name string) (string, bool) {
	attrs, _ := tagAttrs(tag)
	for _, a := range attrs {
		if a.name == name {
			return string(tag[a.valStart:a.valEnd]), true
		}
	}
	return "", false
}

// setAttr returns the raw start tag with the attribute set (added
// before the tag's end when absent); value is written as is.
func setAttr(tag []byte, name, value string) []byte {
	attrs, end := tagAttrs(tag)
	for _, a := range attrs {
		if a.name == name {
			return slices.Concat(tag[:a.valStart], []byte(value), tag[a.valEnd:])
		}
	}
	return slices.Concat(tag[:end], []byte(" "+name+`="`+value+`"`), tag[end:])
}

func delAttr(tag []byte, name string) []byte {
	attrs, _ := tagAttrs(tag)
	for _, a := range attrs {
		if a.name == name {
			return slices.Concat(tag[:a.start], tag[a.end:])
		}
	}
	return tag
}

// openTag turns a raw self-closing start tag into an opening one.
func openTag(tag []byte) []byte {
	if bytes.HasSuffix(tag, []byte("/>")) {
		return slices.Concat(bytes.TrimRight(tag[:len(tag)-2], " \t\r\n"), []byte(">"))
	}
	return tag
}

var xmlTextEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#13;")
var xmlAttrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\n", "&#10;", "\r", "&#13;", "\t", "&#9;")

// xmlClean drops the characters XML 1.0 cannot hold.
func xmlClean(s string) string {
	ok := true
	for _, r := range s {
		if !xmlChar(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !xmlChar(r) {
			return -1
		}
		return r
	}, s)
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

func xmlText(s string) string { return xmlTextEscaper.Replace(xmlClean(s)) }
func xmlAttr(s string) string { return xmlAttrEscaper.Replace(xmlClean(s)) }

// Worksheet children in schema order, for placing the elements the copy
// adds: the print setup goes before the first child ranked after
// headerFooter, the legacy drawing before the first ranked after it.
var sheetRank = map[string]int{
	"sheetPr": 1, "dimension": 2, "sheetViews": 3, "sheetFormatPr": 4, "cols": 5, "sheetData": 6, "sheetCalcPr": 7,
	"sheetProtection": 8, "protectedRanges": 9, "scenarios": 10, "autoFilter": 11, "sortState": 12, "dataConsolidate": 13,
	"customSheetViews": 14, "mergeCells": 15, "phoneticPr": 16, "conditionalFormatting": 17, "dataValidations": 18,
	"hyperlinks": 19, "printOptions": 20, "pageMargins": 21, "pageSetup": 22, "headerFooter": 23, "rowBreaks": 24,
	"colBreaks": 25, "customProperties": 26, "cellWatches": 27, "ignoredErrors": 28, "smartTags": 29, "drawing": 30,
	"legacyDrawing": 31, "legacyDrawingHF": 32, "drawingHF": 33, "picture": 34, "oleObjects": 35, "controls": 36,
	"webPublishItems": 37, "tableParts": 38, "extLst": 39, "AlternateContent": 35,
}

// The print setup of a marked sheet, as templates.SetPrintLayout makes it.
const (
	pageMargins = `<pageMargins left="0.4" right="0.4" top="0.55" bottom="0.55" header="0.3" footer="0.3"/>`
	pageSetup   = `<pageSetup paperSize="9" orientation="landscape" fitToWidth="1" fitToHeight="0"/>`
	headerFoot  = `<headerFooter><oddFooter>&amp;L&amp;A&amp;RPage &amp;P of &amp;N</oddFooter></headerFooter>`
)
