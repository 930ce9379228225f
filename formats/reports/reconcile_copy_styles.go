package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/xuri/excelize/v2"
)

// transplantSheet turns the scratch workbook's Summary sheet into a
// sheet of the copy: its cell formats shifted by xfBase, its shared
// strings written inline.
func transplantSheet(b []byte, sst []string, xfBase int) ([]byte, error) {
	if b == nil {
		return nil, errors.New("annotated copy: the summary sheet is missing")
	}
	var out bytes.Buffer
	out.WriteString(xmlDecl)
	sc := xlsx.NewScanner(bytes.NewReader(b))
	shift := func(raw []byte, attr string) []byte {
		if v, ok := getAttr(raw, attr); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return setAttr(raw, attr, strconv.Itoa(n+xfBase))
			}
		}
		return raw
	}
	var pending []byte // a shared-string cell's start tag, until its value
	var value []byte
	inV := false
	lastCol, lastRow := 0, 0
	for {
		err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		raw := sc.Raw()
		switch sc.Kind {
		case xlsx.TokStart:
			switch string(sc.Name) {
			case "c":
				if c, r := xlsx.CellRef(sc.Attr("r")); c > 0 {
					lastCol, lastRow = max(lastCol, c), max(lastRow, r)
				}
				raw = shift(raw, "s")
				if string(sc.Attr("t")) == "s" && !sc.Self {
					pending = setAttr(raw, "t", "inlineStr")
					value = value[:0]
					continue
				}
			case "row":
				raw = shift(raw, "s")
			case "col":
				raw = shift(raw, "style")
			case "v":
				if pending != nil {
					inV = true
					continue
				}
			}
			if pending != nil {
				continue
			}
		case xlsx.TokText:
			if pending != nil {
				if inV {
					value = append(value, sc.Text...)
				}
				continue
			}
		case xlsx.TokEnd:
			if pending != nil {
				switch string(sc.Name) {
				case "v":
					inV = false
				case "c":
					i, err := strconv.Atoi(strings.TrimSpace(string(value)))
					text := ""
					if err == nil && i >= 0 && i < len(sst) {
						text = sst[i]
					}
					out.Write(pending)
					out.WriteString(`<is><t xml:space="preserve">` + xmlText(text) + `</t></is></c>`)
					pending = nil
				}
				continue
			}
		}
		out.Write(raw)
	}
	// excelize leaves the dimension at A1; a reader that trusts it
	// (openpyxl's read-only mode) would see the Summary's first cell only.
	b = out.Bytes()
	if i := bytes.Index(b, []byte("<dimension ")); i >= 0 && lastCol > 0 {
		if k := bytes.IndexByte(b[i:], '>'); k > 0 {
			to, _ := excelize.CoordinatesToCellName(lastCol, lastRow)
			b = slices.Concat(b[:i], setAttr(b[i:i+k+1], "ref", "A1:"+to), b[i+k+1:])
		}
	}
	return b, nil
}

// styleContainer is one list of the style sheet (numFmts, fonts,
// fills, borders, cellXfs) as written: its start tag, where its end tag
// starts, and its children.
type styleContainer struct {
	start, tagEnd, endStart int
	self                    bool // written <numFmts count="0"/>
	children                [][]byte
}

// styleBook is a style sheet with the formats the copy adds appended
// to its lists.
type styleBook struct {
	raw      []byte
	rootEnd  int
	cont     map[string]*styleContainer
	add      map[string][][]byte
	markXf   map[[2]any]int
	markFill map[string]int
}

var styleLists = []string{"numFmts", "fonts", "fills", "borders", "cellXfs"}

func parseStyles(b []byte) (*styleBook, error) {
	if b == nil {
		return nil, leftToExcelize()
	}
	s := &styleBook{raw: b, rootEnd: -1, cont: map[string]*styleContainer{}, add: map[string][][]byte{}, markXf: map[[2]any]int{}, markFill: map[string]int{}}
	d := xml.NewDecoder(bytes.NewReader(b))
	depth := 0
	var cur *styleContainer
	childStart := 0
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
			switch depth {
			case 1:
				if t.Name.Local != "styleSheet" {
					return nil, leftToExcelize()
				}
				s.rootEnd = int(d.InputOffset())
			case 2:
				cur = nil
				if slices.Contains(styleLists, t.Name.Local) {
					if s.cont[t.Name.Local] != nil {
						return nil, leftToExcelize()
					}
					cur = &styleContainer{start: before, tagEnd: int(d.InputOffset())}
					s.cont[t.Name.Local] = cur
				}
			case 3:
				childStart = before
			}
		case xml.EndElement:
			switch depth {
			case 2:
				if cur != nil {
					cur.endStart = before
					cur.self = cur.endStart == cur.tagEnd && bytes.HasSuffix(b[cur.start:cur.tagEnd], []byte("/>"))
				}
				cur = nil
			case 3:
				if cur != nil {
					cur.children = append(cur.children, b[childStart:d.InputOffset()])
				}
			}
			depth--
		}
	}
	if s.rootEnd < 0 || bytes.HasSuffix(b[:s.rootEnd], []byte("/>")) {
		return nil, leftToExcelize()
	}
	for _, n := range styleLists[1:] {
		if s.cont[n] == nil {
			return nil, leftToExcelize()
		}
	}
	return s, nil
}

// count returns how many entries a list has with those added.
func (s *styleBook) count(list string) int {
	n := len(s.add[list])
	if c := s.cont[list]; c != nil {
		n += len(c.children)
	}
	return n
}

// merge appends the lists of another style sheet (the scratch Summary's)
// and returns the id of its first cell format in this one.
func (s *styleBook) merge(o *styleBook) (int, error) {
	maxFmt := 163
	if c := s.cont["numFmts"]; c != nil {
		for _, f := range c.children {
			if v, ok := getAttr(f, "numFmtId"); ok {
				if n, err := strconv.Atoi(v); err == nil {
					maxFmt = max(maxFmt, n)
				}
			}
		}
	}
	fmtMap := map[int]int{}
	if c := o.cont["numFmts"]; c != nil {
		for _, f := range c.children {
			v, _ := getAttr(f, "numFmtId")
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0, errors.New("annotated copy: the summary's number formats")
			}
			maxFmt++
			fmtMap[n] = maxFmt
			s.add["numFmts"] = append(s.add["numFmts"], setAttr(f, "numFmtId", strconv.Itoa(maxFmt)))
		}
	}
	base := map[string]int{}
	for _, l := range []string{"fonts", "fills", "borders"} {
		base[l] = s.count(l)
		s.add[l] = append(s.add[l], o.cont[l].children...)
	}
	xfBase := s.count("cellXfs")
	for _, x := range o.cont["cellXfs"].children {
		for attr, l := range map[string]string{"fontId": "fonts", "fillId": "fills", "borderId": "borders"} {
			if v, ok := getAttr(x, attr); ok {
				n, _ := strconv.Atoi(v)
				x = setAttr(x, attr, strconv.Itoa(n+base[l]))
			}
		}
		if v, ok := getAttr(x, "numFmtId"); ok {
			if n, err := strconv.Atoi(v); err == nil && fmtMap[n] != 0 {
				x = setAttr(x, "numFmtId", strconv.Itoa(fmtMap[n]))
			}
		}
		x = setAttr(x, "xfId", "0")
		s.add["cellXfs"] = append(s.add["cellXfs"], x)
	}
	return xfBase, nil
}

// markStyle returns the cell format of a marked cell: its old format
// with the mark's fill, one per (old format, fill).
func (s *styleBook) markStyle(old int, fill string) int {
	xfs := s.cont["cellXfs"].children
	if old < 0 || old >= len(xfs) {
		old = 0
	}
	key := [2]any{old, fill}
	if id, ok := s.markXf[key]; ok {
		return id
	}
	fid, ok := s.markFill[fill]
	if !ok {
		fid = s.count("fills")
		s.add["fills"] = append(s.add["fills"], []byte(`<fill><patternFill patternType="solid"><fgColor rgb="FF`+fill+`"/><bgColor indexed="64"/></patternFill></fill>`))
		s.markFill[fill] = fid
	}
	x := []byte(`<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>`)
	if old < len(xfs) {
		x = xfs[old]
	}
	x = setAttr(setAttr(x, "fillId", strconv.Itoa(fid)), "applyFill", "1")
	id := s.count("cellXfs")
	s.add["cellXfs"] = append(s.add["cellXfs"], x)
	s.markXf[key] = id
	return id
}

// bytes returns the style sheet with the added entries.
func (s *styleBook) bytes() []byte {
	type edit struct {
		at, end int
		text    []byte
	}
	var edits []edit
	for _, l := range styleLists {
		add := s.add[l]
		c := s.cont[l]
		if c == nil {
			if len(add) > 0 {
				edits = append(edits, edit{s.rootEnd, s.rootEnd, slices.Concat([]byte(fmt.Sprintf(`<%s count="%d">`, l, len(add))), bytes.Join(add, nil), []byte("</"+l+">"))})
			}
			continue
		}
		tag := setAttr(s.raw[c.start:c.tagEnd], "count", strconv.Itoa(s.count(l)))
		if c.self {
			if len(add) > 0 {
				tag = slices.Concat(openTag(tag), bytes.Join(add, nil), []byte("</"+l+">"))
			}
			edits = append(edits, edit{c.start, c.tagEnd, tag})
			continue
		}
		edits = append(edits, edit{c.start, c.tagEnd, tag})
		if len(add) > 0 {
			edits = append(edits, edit{c.endStart, c.endStart, bytes.Join(add, nil)})
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(s.raw[pos:e.at])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(s.raw[pos:])
	return out.Bytes()
}
