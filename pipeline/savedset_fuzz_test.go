package pipeline

import (
	"testing"
	"time"
)

// FuzzParseSaved: any input is either refused or a change set whose
// signature holds and that marshals back to an equal signature.
func FuzzParseSaved(f *testing.F) {
	in := inPlan("", "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1})
	d := Diff(in, storedPlan(), DiffOptions{})
	d.Account = "acme"
	s, err := SaveChangeSet(&ChangeSet{Plans: []*PlanDiff{d}}, "svc", []InputFile{{Path: "a.csv", SHA256: "ab"}}, time.Unix(0, 0))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := MarshalSaved(s)
	f.Add(b)
	f.Add([]byte(`{"schema":"eepipe.changeset/v1"}`))
	f.Add([]byte(`{"schema":"eepipe.changeset/v9"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSaved(data)
		if err != nil {
			return
		}
		if s.digest() != s.SHA256 {
			t.Fatalf("accepted a change set whose signature does not hold")
		}
		b, err := MarshalSaved(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseSaved(b)
		if err != nil || back.SHA256 != s.SHA256 {
			t.Fatalf("re-marshalled change set refused: %v", err)
		}
	})
}
