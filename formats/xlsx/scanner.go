package xlsx

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Scanner is a small pull tokenizer for worksheet XML, used instead
// of encoding/xml on the flat reader's hot path: a sheet of 100,000 rows
// holds millions of cells, and encoding/xml allocates several values per
// token. It yields start tags (local name and attributes), end tags and
// text with entities decoded; comments, processing instructions and
// declarations are skipped, CDATA is text. It checks only what reading
// needs, not well-formedness. It scans its own buffer, so names, values
// and text without entities are slices of it, copied nowhere: the slices
// it returns are valid until the next call.
type Scanner struct {
	r        io.Reader
	buf      []byte // buf[pos:end] is read and not yet scanned
	pos, end int
	rerr     error // the reader's error (io.EOF at the end), once it gave one

	Kind  TokKind
	Name  []byte   // local name of a start or end tag
	attrs []Attr   // attributes of a start tag
	Text  []byte   // decoded text
	Self  bool     // the start tag closes itself (<c/>)
	pool  [][]byte // decoded attribute values, reused
	tbuf  []byte   // decoded text, when it has references

	maxToken int // the buffer's bound: a longer token is errFlatTokenTooLong
	tokStart int // buf[tokStart:pos] is the last token as written (raw)
}

type TokKind int

const (
	TokStart TokKind = iota + 1
	TokEnd
	TokText
)

type Attr struct {
	Name  []byte // local name
	Value []byte // decoded value
}

var ErrXML = errors.New("malformed XML")

// scanBuf is the scanner's initial buffer size; it grows for longer
// tokens, up to defaultMaxToken.
const scanBuf = 64 << 10

func NewScanner(r io.Reader) *Scanner {
	if s, ok := scannerPool.Get().(*Scanner); ok {
		*s = Scanner{r: r, buf: s.buf, maxToken: defaultMaxToken}
		return s
	}
	return newScannerMax(r, defaultMaxToken)
}

// scannerPool holds the scanners whose scan is done (release), so
// that reading a workbook of thousands of small sheets, each scanned a
// few times, does not allocate a buffer for every scan.
var scannerPool sync.Pool

// Release hands a scanner of the default bound whose buffer has not grown
// to the pool; the scanner and what it returned are not used after.
func (s *Scanner) Release() {
	if s.maxToken != defaultMaxToken || len(s.buf) != scanBuf {
		return
	}
	*s = Scanner{buf: s.buf}
	scannerPool.Put(s)
}

// newScannerMax returns a scanner whose tokens are bounded by
// maxToken bytes (tests and fuzzing use small bounds).
func newScannerMax(r io.Reader, maxToken int) *Scanner {
	return &Scanner{r: r, buf: make([]byte, min(scanBuf, maxToken)), maxToken: maxToken}
}

// Results of scanning a token in the buffer: more input is needed, or the
// token is malformed.
const (
	needMore = -1
	bad      = -2
)

// more reads more input after buf[pos:end], keeping it, until the buffer
// is full (so that a token longer than the buffer is scanned again only
// each time the buffer doubles); false when the reader has no more to give.
func (s *Scanner) more() bool {
	if s.rerr != nil {
		return false
	}
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= s.maxToken {
			s.rerr = errFlatTokenTooLong
			return false
		}
		s.buf = append(s.buf, make([]byte, min(len(s.buf), s.maxToken-len(s.buf)))...)
	}
	got, empty := false, 0
	for s.end < len(s.buf) {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		got = got || n > 0
		if err != nil {
			s.rerr = err
			return got
		}
		if n == 0 {
			if empty++; empty == 100 {
				s.rerr = io.ErrNoProgress
				return got
			}
		}
	}
	return true
}

// Next reads the next token; io.EOF at the end.
func (s *Scanner) Next() error {
	for {
		if s.pos == s.end && !s.more() {
			return s.rerr
		}
		b := s.buf[s.pos:s.end]
		s.tokStart = s.pos
		var n int
		skip := false
		if b[0] != '<' {
			n = s.scanText(b)
		} else {
			n, skip = s.scanMarkup(b)
		}
		switch n {
		case bad:
			return ErrXML
		case needMore:
			if !s.more() {
				b = s.buf[s.pos:s.end] // more may have moved it
				if b[0] != '<' && s.rerr == io.EOF {
					// Text up to the end of the input.
					s.tokStart = s.pos
					s.setText(b)
					s.pos = s.end
					return nil
				}
				if errors.Is(s.rerr, ErrOversized) {
					return s.rerr
				}
				return ErrXML
			}
			continue
		}
		s.pos += n
		if !skip {
			return nil
		}
	}
}

// scanText scans text up to the next '<'.
func (s *Scanner) scanText(b []byte) int {
	i := bytes.IndexByte(b, '<')
	if i < 0 {
		return needMore
	}
	s.setText(b[:i])
	return i
}

func (s *Scanner) setText(raw []byte) {
	s.Kind = TokText
	if bytes.IndexByte(raw, '&') < 0 {
		s.Text = raw
		return
	}
	s.tbuf = appendXMLUnescaped(s.tbuf[:0], raw)
	s.Text = s.tbuf
}

// scanMarkup scans a tag, comment, processing instruction, declaration or
// CDATA section starting at b[0] == '<'. skip is true for the ones that
// are not tokens.
func (s *Scanner) scanMarkup(b []byte) (n int, skip bool) {
	if len(b) < 2 {
		return needMore, false
	}
	switch b[1] {
	case '/':
		name, i := scanName(b, 2)
		if i < 0 {
			return i, false
		}
		j := bytes.IndexByte(b[i:], '>')
		if j < 0 {
			return needMore, false
		}
		s.Kind, s.Name = TokEnd, name
		return i + j + 1, false
	case '?':
		j := bytes.Index(b[2:], []byte("?>"))
		if j < 0 {
			return needMore, false
		}
		return 2 + j + 2, true
	case '!':
		rest := b[2:]
		switch {
		case len(rest) < 7 && bytes.HasPrefix([]byte("[CDATA["), rest), len(rest) < 2 && bytes.HasPrefix([]byte("--"), rest):
			return needMore, false
		case bytes.HasPrefix(rest, []byte("[CDATA[")):
			j := bytes.Index(rest[7:], []byte("]]>"))
			if j < 0 {
				return needMore, false
			}
			s.Kind, s.Text = TokText, rest[7:7+j]
			return 2 + 7 + j + 3, false
		case bytes.HasPrefix(rest, []byte("--")):
			j := bytes.Index(rest, []byte("-->"))
			if j < 0 {
				return needMore, false
			}
			return 2 + j + 3, true
		}
		j := bytes.IndexByte(rest, '>')
		if j < 0 {
			return needMore, false
		}
		return 2 + j + 1, true
	}
	return s.scanStart(b), false
}

// scanStart scans a start tag and its attributes.
func (s *Scanner) scanStart(b []byte) int {
	name, i := scanName(b, 1)
	if i < 0 {
		return i
	}
	s.Kind, s.Self, s.Name, s.attrs = TokStart, false, name, s.attrs[:0]
	for {
		i = skipSpace(b, i)
		if i < 0 {
			return i
		}
		switch b[i] {
		case '>':
			return i + 1
		case '/':
			if i+1 >= len(b) {
				return needMore
			}
			if b[i+1] != '>' {
				return bad
			}
			s.Self = true
			return i + 2
		}
		an, j := scanName(b, i)
		if j < 0 {
			return j
		}
		if j = skipSpace(b, j); j < 0 {
			return j
		}
		if b[j] != '=' {
			return bad
		}
		if j = skipSpace(b, j+1); j < 0 {
			return j
		}
		q := b[j]
		if q != '"' && q != '\'' {
			return bad
		}
		k := bytes.IndexByte(b[j+1:], q)
		if k < 0 {
			return needMore
		}
		raw := b[j+1 : j+1+k]
		value := raw
		if bytes.IndexByte(raw, '&') >= 0 {
			a := len(s.attrs)
			for len(s.pool) <= a {
				s.pool = append(s.pool, nil)
			}
			s.pool[a] = appendXMLUnescaped(s.pool[a][:0], raw)
			value = s.pool[a]
		}
		s.attrs = append(s.attrs, Attr{Name: an, Value: value})
		i = j + 1 + k + 1
	}
}

func IsXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// scanName scans a tag or attribute name at b[i:] and returns its
// local part and the index after it.
func scanName(b []byte, i int) ([]byte, int) {
	start := i
	for ; i < len(b); i++ {
		if c := b[i]; IsXMLSpace(c) || c == '>' || c == '/' || c == '=' {
			break
		}
	}
	if i == len(b) {
		return nil, needMore
	}
	name := b[start:i]
	if len(name) == 0 {
		return nil, bad
	}
	if k := bytes.LastIndexByte(name, ':'); k >= 0 {
		name = name[k+1:]
	}
	return name, i
}

// skipSpace returns the index of the first byte at or after i that is
// not a space.
func skipSpace(b []byte, i int) int {
	for ; i < len(b); i++ {
		if !IsXMLSpace(b[i]) {
			return i
		}
	}
	return needMore
}

// Raw returns the last token as written in the input (entities not
// decoded); valid until the next call.
func (s *Scanner) Raw() []byte { return s.buf[s.tokStart:s.pos] }

// Attr returns the value of the attribute with the local name, or nil.
func (s *Scanner) Attr(name string) []byte {
	for _, a := range s.attrs {
		if string(a.Name) == name {
			return a.Value
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

// Atoi reads a short run of ASCII digits (at most 10) as a number.
func Atoi(b []byte) (int, bool) {
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

// AttrLocal returns the value of an attribute by its local name.
func (s *Scanner) AttrLocal(name string) (string, bool) {
	for _, a := range s.attrs {
		if string(a.Name) == name {
			return string(a.Value), true
		}
	}
	return "", false
}
