package table

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCSVSafeField: what the CSV writers write reads back as the text.
func FuzzCSVSafeField(f *testing.F) {
	for _, s := range []string{"", "=1+1", "'=x", "-2", "+27 11", "@a", "\tx", "''", "'", "Acme"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := CSVSafeField(s)
		if CSVUnsafeField(w) != s {
			t.Fatalf("%q written %q read back %q", s, w, CSVUnsafeField(w))
		}
		// Through the writer and encoding/csv, the field is the same.
		var buf bytes.Buffer
		cw := NewCSVWriter(&buf)
		_ = cw.Write([]string{s, "x"})
		cw.Flush()
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\r") {
			return // encoding/csv rewrites line ends
		}
		rec, err := csv.NewReader(&buf).Read()
		if err != nil || len(rec) != 2 || CSVUnsafeField(rec[0]) != s {
			t.Fatalf("%q read back as %q, %v", s, rec, err)
		}
	})
}
