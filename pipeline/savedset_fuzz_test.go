package pipeline

import (
	"bytes"
	"crypto/sha256"
	"testing"
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
