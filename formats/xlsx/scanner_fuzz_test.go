package xlsx

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzScannerBounded scans arbitrary XML with a small token bound:
// never a panic, never a buffer past the bound, and a token longer than
// the bound ends the scan as an oversized file.
func FuzzScannerBounded(f *testing.F) {
	f.Add([]byte(`<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>target_type</t></is></c></row></sheetData></worksheet>`), uint16(64))
	f.Add([]byte(`<a b="`+strings.Repeat("x", 300)+`"/>`), uint16(100))
	f.Add([]byte(`<x>`+strings.Repeat(" ", 5000)+`</x>`), uint16(0))
	f.Add([]byte(`<![CDATA[`+strings.Repeat("]", 500)+`]]><!--`+strings.Repeat("-", 300)+`-->`), uint16(17))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		bound := 16 + int(max)%4096
		sc := newScannerMax(bytes.NewReader(data), bound)
		for range len(data) + 2 {
			err := sc.Next()
			if len(sc.buf) > bound {
				t.Fatalf("buffer %d bytes, bound %d", len(sc.buf), bound)
			}
			if errors.Is(err, ErrOversized) && len(data) < bound {
				t.Fatalf("oversized on %d bytes with a bound of %d", len(data), bound)
			}
			if err != nil {
				return
			}
		}
		t.Fatal("the scan does not end")
	})
}
