package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
)

// writeNotes writes a marked sheet's relationships, comments and VML
// drawing.
func (c *streamedCopy) writeNotes(put func(string, []byte) error, copyPart func(string) error, j *sheetJob) error {
	vmlRID := j.legacyRID
	if vmlRID != "" {
		for _, rl := range j.rels {
			if rl.ID == vmlRID && strings.HasSuffix(rl.Type, "/vmlDrawing") {
				j.vmlPath, j.vmlOld = xlsx.RelTarget(j.Info.Path, rl.Target), true
			}
		}
		if !j.vmlOld {
			return leftToExcelize()
		}
	} else {
		vmlRID = j.newVMLRID
		j.vmlPath = c.newPart("xl/drawings/vmlDrawing%d.vml")
	}
	comments, err := c.commentsPart(j)
	if err != nil {
		return err
	}
	if err := put(j.commentsPath, comments); err != nil {
		return err
	}
	vml, err := c.vmlPart(j)
	if err != nil {
		return err
	}
	if err := put(j.vmlPath, vml); err != nil {
		return err
	}
	for _, p := range j.vmlParts {
		if p != j.vmlPath {
			if err := copyPart(p); err != nil {
				return err
			}
		}
	}
	rels, err := c.sheetRels(j, vmlRID)
	if err != nil {
		return err
	}
	return put(j.relsPath, rels)
}

// commentsPart is a marked sheet's comments part: the workbook's own
// comments kept, ours for the marked cells (a comment the cell had goes
// below ours).
func (c *streamedCopy) commentsPart(j *sheetJob) ([]byte, error) {
	var old *commentsPart
	if j.commentsOld {
		b, err := c.readMeta(j.commentsPath)
		if err != nil {
			return nil, err
		}
		if old, err = parseComments(b); err != nil {
			return nil, err
		}
	}
	var cb bytes.Buffer
	cb.WriteString(xmlDecl)
	authors := []string{commentAuthor}
	if old != nil {
		cb.Write(old.root)
		authors = old.authors
		if !slices.Contains(authors, commentAuthor) {
			authors = append(authors, commentAuthor)
		}
	} else {
		cb.WriteString(`<comments xmlns="` + nsMain + `">`)
	}
	me := slices.Index(authors, commentAuthor)
	cb.WriteString("<authors>")
	for _, a := range authors {
		cb.WriteString("<author>" + xmlText(a) + "</author>")
	}
	cb.WriteString("</authors><commentList>")
	byRef := map[string]*cellMark{}
	for i := range j.Marks {
		byRef[j.Marks[i].Ref] = &j.Marks[i]
	}
	if old != nil {
		for _, oc := range old.list {
			if m := byRef[strings.ToUpper(oc.ref)]; m != nil {
				m.merged, m.existing = true, oc.text
				continue
			}
			cb.Write(oc.raw)
		}
	}
	for i := range j.Marks {
		m := &j.Marks[i]
		text := strings.Join(m.Note.lines, "\n")
		if m.existing != "" {
			text += "\n---\n" + m.existing
		}
		run := `<rPr><sz val="9"/><color indexed="81"/><rFont val="Tahoma"/><family val="2"/></rPr>`
		fmt.Fprintf(&cb, `<comment ref="%s" authorId="%d"><text><r><rPr><b/><sz val="9"/><color indexed="81"/><rFont val="Tahoma"/><family val="2"/></rPr><t xml:space="preserve">%s</t></r><r>%s<t xml:space="preserve">%s</t></r></text></comment>`,
			m.Ref, me, xmlText(commentAuthor+":\n"), run, xmlText(text))
	}
	cb.WriteString("</commentList></comments>")
	return cb.Bytes(), nil
}

// vmlPart is a marked sheet's VML drawing: the cells that had no comment
// get a note shape.
func (c *streamedCopy) vmlPart(j *sheetJob) ([]byte, error) {
	var shapes bytes.Buffer
	nsDecl := ""
	id := j.block * 1024
	var vml []byte
	if j.vmlOld {
		b, err := c.readMeta(j.vmlPath)
		if err != nil {
			return nil, err
		}
		// The drawing's root may not declare the v, o and x prefixes
		// (openpyxl declares its own on each element): the shapes added
		// declare them.
		nsDecl = ` xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:x="urn:schemas-microsoft-com:office:excel"`
		for _, m := range vmlShapeID.FindAllSubmatch(b, -1) {
			if n, err := strconv.Atoi(string(m[1])); err == nil {
				id = max(id, n)
			}
		}
		if !bytes.Contains(b, []byte(`id="_x0000_t202"`)) {
			shapes.WriteString(strings.Replace(vmlShapeType, "<v:shapetype", "<v:shapetype"+nsDecl, 1))
		}
		vml = b
	}
	firstID := id + 1
	for i := range j.Marks {
		m := &j.Marks[i]
		if m.merged {
			continue
		}
		id++
		lines := strings.Count(strings.Join(m.Note.lines, "\n"), "\n") + 2
		r0 := max(m.Row-2, 0)
		fmt.Fprintf(&shapes, `<v:shape%s id="_x0000_s%d" type="#_x0000_t202" style="position:absolute;margin-left:59.25pt;margin-top:1.5pt;width:195pt;height:%dpt;z-index:%d;visibility:hidden" fillcolor="#ffffe1" o:insetmode="auto"><v:fill color2="#ffffe1"/><v:shadow on="t" color="black" obscured="t"/><v:path o:connecttype="none"/><v:textbox style="mso-direction-alt:auto"><div style="text-align:left"></div></v:textbox><x:ClientData ObjectType="Note"><x:MoveWithCells/><x:SizeWithCells/><x:Anchor>%d, 15, %d, 2, %d, 15, %d, 16</x:Anchor><x:AutoFill>False</x:AutoFill><x:Row>%d</x:Row><x:Column>%d</x:Column></x:ClientData></v:shape>`,
			nsDecl, id, 45+12*lines, i+1, m.Col, r0, m.Col+3, r0+lines+2, m.Row-1, m.Col-1)
	}
	if j.vmlOld {
		var err error
		if vml, err = insertBefore(vml, "</xml>", shapes.String()); err != nil {
			return nil, err
		}
		if id >= firstID {
			vml = addIDBlocks(vml, firstID/1024, id/1024)
		}
	} else {
		var blocks []string
		for b := j.block; b*1024 <= id; b++ {
			blocks = append(blocks, strconv.Itoa(b))
		}
		vml = slices.Concat([]byte(`<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:x="urn:schemas-microsoft-com:office:excel"><o:shapelayout v:ext="edit"><o:idmap v:ext="edit" data="`+strings.Join(blocks, ",")+`"/></o:shapelayout>`+vmlShapeType),
			shapes.Bytes(), []byte("</xml>"))
	}
	return vml, nil
}

// sheetRels is a marked sheet's relationships part, with those of the
// comments and the drawing added.
func (c *streamedCopy) sheetRels(j *sheetJob, vmlRID string) ([]byte, error) {
	var add strings.Builder
	if !j.commentsOld {
		fmt.Fprintf(&add, `<Relationship Id="%s" Type="%s" Target="%s"/>`, j.commentsRID, relComment, xmlAttr(relPath(j.Info.Path, j.commentsPath)))
	}
	if !j.vmlOld {
		fmt.Fprintf(&add, `<Relationship Id="%s" Type="%s" Target="%s"/>`, vmlRID, relVML, xmlAttr(relPath(j.Info.Path, j.vmlPath)))
	}
	var rels []byte
	if j.hasRels {
		b, err := c.readMeta(j.relsPath)
		if err != nil {
			return nil, err
		}
		if rels, err = insertBefore(b, "</Relationships>", add.String()); err != nil {
			return nil, err
		}
	} else {
		rels = []byte(xmlDecl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + add.String() + `</Relationships>`)
	}
	return rels, nil
}

// tabSelectedAttr matches a sheet view start tag's tabSelected="1"
// (group 1: the tag before it).
var tabSelectedAttr = regexp.MustCompile(`(<(?:[A-Za-z_][\w.-]*:)?sheetView\b[^>]*?)\s+tabSelected\s*=\s*(?:"(?:1|true)"|'(?:1|true)')`)

var hasVMLDefault = regexp.MustCompile(`(?i)<Default[^>]*Extension="vml"`)

// vmlIDMap matches the data attribute of a VML drawing's shape id map
// (o:idmap, whatever its prefix), the blocks of 1,024 shape ids the
// drawing uses.
var vmlIDMap = regexp.MustCompile(`(<(?:[A-Za-z_][\w.-]*:)?idmap\b[^>]*?\bdata=")([0-9, ]*)"`)

// addIDBlocks adds the shape id blocks from..to to an existing
// drawing's id map, for the note shapes added to it.
func addIDBlocks(vml []byte, from, to int) []byte {
	loc := vmlIDMap.FindSubmatchIndex(vml)
	if loc == nil {
		return vml
	}
	have := string(vml[loc[4]:loc[5]])
	list := strings.FieldsFunc(have, func(r rune) bool { return r == ',' || r == ' ' })
	for b := from; b <= to; b++ {
		if !slices.Contains(list, strconv.Itoa(b)) {
			list = append(list, strconv.Itoa(b))
		}
	}
	return slices.Concat(vml[:loc[4]], []byte(strings.Join(list, ",")), vml[loc[5]:])
}

var vmlShapeID = regexp.MustCompile(`_x0000_s(\d{1,9})\b`)

const vmlShapeType = `<v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/><v:path gradientshapeok="t" o:connecttype="rect"/></v:shapetype>`

// commentsPart is a comments part read for merging.
type commentsPart struct {
	root    []byte // the root start tag as written (its namespaces)
	authors []string
	list    []struct {
		ref, text string
		raw       []byte
	}
}

func parseComments(b []byte) (*commentsPart, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	out := &commentsPart{}
	depth := 0
	var (
		cur       string
		start     int
		ref, text strings.Builder
		inT       bool
		inRPh     bool
	)
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
			if t.Name.Space != "" && depth <= 3 {
				return nil, leftToExcelize()
			}
			switch {
			case depth == 1:
				if t.Name.Local != "comments" {
					return nil, leftToExcelize()
				}
				out.root = openTag(b[before:d.InputOffset()])
			case depth == 2:
				cur = t.Name.Local
			case depth == 3 && cur == "authors" && t.Name.Local == "author":
				text.Reset()
				inT = true
			case depth == 3 && cur == "commentList" && t.Name.Local == "comment":
				start = before
				ref.Reset()
				text.Reset()
				for _, a := range t.Attr {
					if a.Name.Local == "ref" {
						ref.WriteString(a.Value)
					}
				}
			case depth > 3 && cur == "commentList":
				switch t.Name.Local {
				case "t":
					inT = !inRPh
				case "rPh":
					inRPh = true
				}
			}
		case xml.CharData:
			if inT {
				text.Write(t)
			}
		case xml.EndElement:
			switch {
			case depth == 3 && cur == "authors":
				out.authors = append(out.authors, text.String())
				inT = false
			case depth == 3 && cur == "commentList":
				out.list = append(out.list, struct {
					ref, text string
					raw       []byte
				}{ref.String(), text.String(), b[start:d.InputOffset()]})
			case depth > 3 && t.Name.Local == "t":
				inT = false
			case depth > 3 && t.Name.Local == "rPh":
				inRPh = false
			}
			depth--
		}
	}
	if out.root == nil {
		return nil, leftToExcelize()
	}
	return out, nil
}
