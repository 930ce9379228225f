package savedset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// scanWhole reads a whole saved change set, its plans included, through
// ScanSaved (apply streams a set and never holds it whole).
func scanWhole(b []byte) (*SavedChangeSet, error) {
	var plans []SavedPlan
	s, err := ScanSaved(bytes.NewReader(b), func(_ *SavedChangeSet, _ int, p *SavedPlan, _ [sha256.Size]byte) error {
		plans = append(plans, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Plans = plans
	return s, nil
}

// FuzzScanSaved: any input is either refused or a change set whose
// content digest marshals back to the same digest; one whose signature
// holds still holds after a round trip.
func FuzzScanSaved(f *testing.F) {
	_, s := testSavedSet(f)
	b, _ := MarshalSaved(s)
	f.Add(b)
	f.Add([]byte(`{"schema":"eepipe.changeset/v1"}`))
	f.Add([]byte(`{"schema":"eepipe.changeset/v2"}`))
	f.Add([]byte(`{"schema":"eepipe.changeset/v9"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scanWhole(data)
		if err != nil {
			return
		}
		verr := s.Verify(testService, testSetKeys())
		b, err := MarshalSaved(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := scanWhole(b)
		if err != nil {
			t.Fatalf("re-marshalled change set refused: %v", err)
		}
		if string(back.digest) != string(s.digest) {
			t.Fatalf("the content digest changed in a round trip")
		}
		if verr == nil {
			if err := back.Verify(testService, testSetKeys()); err != nil {
				t.Fatalf("a verified set no longer verifies after a round trip: %v", err)
			}
		}
	})
}

// FuzzSpaceCollapser: the JSON a spaceCollapser reads, a byte at a time
// or in larger reads, is valid exactly when its input is, and compacts to
// the same text: collapsing whitespace changes nothing a decoder sees.
func FuzzSpaceCollapser(f *testing.F) {
	_, s := testSavedSet(f)
	b, _ := MarshalSaved(s)
	f.Add(b)
	f.Add([]byte("[1 \t\r\n 2]"))
	f.Add([]byte(`{"a" :  "x  \"  \\"   ,  "b":[ ]}   `))
	f.Add([]byte("\"\\\\\"   \"  \""))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(in)), bufio.NewReaderSize(bytes.NewReader(in), 16), bytes.NewReader(in)} {
			out, err := io.ReadAll(&spaceCollapser{r: r})
			if err != nil {
				t.Fatal(err)
			}
			if json.Valid(out) != json.Valid(in) {
				t.Fatalf("%q collapsed to %q: valid %v, was %v", in, out, json.Valid(out), json.Valid(in))
			}
			if !json.Valid(in) {
				continue
			}
			var want, got bytes.Buffer
			json.Compact(&want, in)
			json.Compact(&got, out)
			if want.String() != got.String() {
				t.Fatalf("%q collapsed to %q: compacts to %q, want %q", in, out, got.String(), want.String())
			}
		}
	})
}

// TestSpaceCollapserCutsRuns: each run of whitespace outside a string is
// cut to its first byte; a string's whitespace, escaped quotes and
// backslashes included, is kept.
func TestSpaceCollapserCutsRuns(t *testing.T) {
	in := "{ \n\t \"a b  \\\"  c\\\\\"  :\r\n\r\n[1  ,\n\n2] }  \n"
	want := "{ \"a b  \\\"  c\\\\\" :\r[1 ,\n2] } "
	out, err := io.ReadAll(&spaceCollapser{r: iotest.OneByteReader(strings.NewReader(in))})
	if err != nil || string(out) != want {
		t.Fatalf("collapsed to %q, %v; want %q", out, err, want)
	}
}
