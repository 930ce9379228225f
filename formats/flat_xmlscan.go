package formats

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// flatXMLScanner is a small pull tokenizer for worksheet XML, used instead
// of encoding/xml on the flat reader's hot path: a sheet of 100,000 rows
// holds millions of cells, and encoding/xml allocates several values per
// token. It yields start tags (local name and attributes), end tags and
// text with entities decoded; comments, processing instructions and
// declarations are skipped, CDATA is text. It checks only what reading
// needs, not well-formedness. The slices it returns are valid until the
// next call.
type flatXMLScanner struct {
	r     *bufio.Reader
	kind  flatTokKind
	name  []byte        // local name of a start or end tag
	attrs []flatXMLAttr // attributes of a start tag
	text  []byte        // decoded text
	buf   []byte        // scratch for names and values
	self  bool          // the start tag closes itself (<c/>)
	pool  [][]byte      // attribute value buffers, reused
}

type flatTokKind int

const (
	flatTokStart flatTokKind = iota + 1
	flatTokEnd
	flatTokText
)

type flatXMLAttr struct {
	name  []byte // local name
	value []byte // decoded value
}

var errFlatXML = errors.New("malformed XML")

func newFlatXMLScanner(r io.Reader) *flatXMLScanner {
	return &flatXMLScanner{r: bufio.NewReaderSize(r, 64<<10)}
}

// next reads the next token; io.EOF at the end.
func (s *flatXMLScanner) next() error {
	c, err := s.r.ReadByte()
	if err != nil {
		return err
	}
	if c != '<' {
		_ = s.r.UnreadByte()
		return s.readText()
	}
	c, err = s.r.ReadByte()
	if err != nil {
		return errFlatXML
	}
	switch c {
	case '/':
		s.kind = flatTokEnd
		name, err := s.readName()
		if err != nil {
			return err
		}
		s.name = name
		if _, err := s.r.ReadSlice('>'); err != nil {
			return errFlatXML
		}
		return nil
	case '?':
		if err := s.skipUntil([]byte("?>")); err != nil {
			return err
		}
		return s.next()
	case '!':
		head, _ := s.r.Peek(7)
		switch {
		case bytes.HasPrefix(head, []byte("[CDATA[")):
			_, _ = s.r.Discard(7)
			s.text = s.text[:0]
			for {
				chunk, err := s.r.ReadSlice(']')
				s.text = append(s.text, chunk...)
				if err == bufio.ErrBufferFull {
					continue
				}
				if err != nil {
					return errFlatXML
				}
				if p, _ := s.r.Peek(2); bytes.Equal(p, []byte("]>")) {
					_, _ = s.r.Discard(2)
					s.text = s.text[:len(s.text)-1]
					s.kind = flatTokText
					return nil
				}
			}
		case bytes.HasPrefix(head, []byte("--")):
			if err := s.skipUntil([]byte("-->")); err != nil {
				return err
			}
		default:
			if _, err := s.r.ReadSlice('>'); err != nil {
				return errFlatXML
			}
		}
		return s.next()
	}
	_ = s.r.UnreadByte()
	return s.readStart()
}

func (s *flatXMLScanner) skipUntil(end []byte) error {
	last := end[len(end)-1]
	var tail []byte
	for {
		chunk, err := s.r.ReadSlice(last)
		if err != nil && err != bufio.ErrBufferFull {
			return errFlatXML
		}
		tail = append(tail, chunk...)
		if bytes.HasSuffix(tail, end) {
			return nil
		}
		if len(tail) > len(end) {
			tail = append(tail[:0], tail[len(tail)-len(end):]...)
		}
	}
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// readName reads a tag or attribute name and returns its local part.
func (s *flatXMLScanner) readName() ([]byte, error) {
	s.buf = s.buf[:0]
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return nil, errFlatXML
		}
		if isXMLSpace(c) || c == '>' || c == '/' || c == '=' {
			_ = s.r.UnreadByte()
			break
		}
		s.buf = append(s.buf, c)
	}
	if len(s.buf) == 0 {
		return nil, errFlatXML
	}
	name := s.buf
	if i := bytes.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	for _, n := range flatInterned {
		if bytes.Equal(n, name) {
			return n, nil
		}
	}
	return append([]byte(nil), name...), nil
}

// flatInterned are the names the reader looks at, returned without a copy.
var flatInterned = [][]byte{[]byte("c"), []byte("v"), []byte("r"), []byte("s"), []byte("t"), []byte("row"), []byte("f"), []byte("is"), []byte("sheetData"), []byte("rPh"), []byte("si")}

func (s *flatXMLScanner) skipSpace() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, errFlatXML
		}
		if !isXMLSpace(c) {
			return c, nil
		}
	}
}

func (s *flatXMLScanner) readStart() error {
	s.kind, s.self, s.attrs = flatTokStart, false, s.attrs[:0]
	name, err := s.readName()
	if err != nil {
		return err
	}
	s.name = name
	for {
		c, err := s.skipSpace()
		if err != nil {
			return err
		}
		switch c {
		case '>':
			return nil
		case '/':
			if c, err = s.r.ReadByte(); err != nil || c != '>' {
				return errFlatXML
			}
			s.self = true
			return nil
		}
		_ = s.r.UnreadByte()
		an, err := s.readName()
		if err != nil {
			return err
		}
		if c, err = s.skipSpace(); err != nil || c != '=' {
			return errFlatXML
		}
		q, err := s.skipSpace()
		if err != nil || (q != '"' && q != '\'') {
			return errFlatXML
		}
		raw, err := s.r.ReadSlice(q)
		if err != nil {
			return errFlatXML
		}
		i := len(s.attrs)
		if i < len(s.pool) {
			s.pool[i] = appendXMLUnescaped(s.pool[i][:0], raw[:len(raw)-1])
		} else {
			s.pool = append(s.pool, appendXMLUnescaped(nil, raw[:len(raw)-1]))
		}
		s.attrs = append(s.attrs, flatXMLAttr{name: an, value: s.pool[i]})
	}
}

func (s *flatXMLScanner) readText() error {
	s.kind = flatTokText
	s.buf = s.buf[:0]
	for {
		chunk, err := s.r.ReadSlice('<')
		if err == nil {
			s.buf = append(s.buf, chunk[:len(chunk)-1]...)
			_ = s.r.UnreadByte()
			break
		}
		s.buf = append(s.buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		return errFlatXML
	}
	s.text = appendXMLUnescaped(s.text[:0], s.buf)
	return nil
}

// attr returns the value of the attribute with the local name, or nil.
func (s *flatXMLScanner) attr(name string) []byte {
	for _, a := range s.attrs {
		if string(a.name) == name {
			return a.value
		}
	}
	return nil
}

var xmlEntities = map[string]string{"lt": "<", "gt": ">", "amp": "&", "quot": `"`, "apos": "'"}

// appendXMLUnescaped appends b with its entity and character references
// decoded; an unknown or malformed reference is kept as written.
func appendXMLUnescaped(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, '&')
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		j := bytes.IndexByte(b, ';')
		if j < 0 || j > 12 {
			dst = append(dst, '&')
			b = b[1:]
			continue
		}
		ref := string(b[1:j])
		switch {
		case len(ref) > 1 && ref[0] == '#':
			var v uint64
			var err error
			if ref[1] == 'x' || ref[1] == 'X' {
				v, err = strconv.ParseUint(ref[2:], 16, 32)
			} else {
				v, err = strconv.ParseUint(ref[1:], 10, 32)
			}
			if err != nil || !utf8.ValidRune(rune(v)) {
				dst = append(dst, b[:j+1]...)
			} else {
				dst = utf8.AppendRune(dst, rune(v))
			}
		default:
			if e, ok := xmlEntities[ref]; ok {
				dst = append(dst, e...)
			} else {
				dst = append(dst, b[:j+1]...)
			}
		}
		b = b[j+1:]
	}
}

// flatColumnOf returns the column number of a cell reference such as
// "AB12" (case-insensitive), or 0 when it is not one.
func flatColumnOf(ref []byte) int {
	col, i := 0, 0
	for ; i < len(ref); i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
		if col > 16384 {
			return 0
		}
	}
	if i == 0 || i == len(ref) {
		return 0
	}
	for _, c := range ref[i:] {
		if c < '0' || c > '9' {
			return 0
		}
	}
	return col
}

func flatAtoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
