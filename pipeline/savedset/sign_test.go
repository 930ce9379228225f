package savedset

import "github.com/eepipe/eepipe/pipeline/pipelinetest"

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"strings"
	"testing"
	"time"
)

const testService = "http://127.0.0.1:8080"

func testSetKeys() SetKeys {
	return SetKeys{
		"acme":  NewSetKey("acme", "8ovHrj", "mpk_acme_key_0001", "acme-secret"),
		"karoo": NewSetKey("karoo", "K4r00x", "mpk_karoo_key_002", "karoo-secret"),
	}
}

// testSavedSet is a signed set updating stored plan 17 (amt 9 -> 1) and
// creating plan "New".
func testSavedSet(t testing.TB) (*diff.ChangeSet, *SavedChangeSet) {
	t.Helper()
	in := pipelinetest.InPlan("", "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})
	d := diff.Diff(in, pipelinetest.SamplePlan(), diff.DiffOptions{})
	d.Account = "acme"
	newPlan := diff.Diff(pipelinetest.InPlan("", "New", "2026-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Wfs: 4}), nil, diff.DiffOptions{})
	newPlan.Account = "acme"
	cs := &diff.ChangeSet{Plans: []*diff.PlanDiff{d, newPlan}}
	s, err := SaveChangeSet(cs, testService, []pipeline.InputFile{{Path: "v1.csv", SHA256: "ab"}}, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), pipeline.DefaultCatalog(), testSetKeys())
	if err != nil {
		t.Fatal(err)
	}
	return cs, s
}

func TestSavedChangeSetSignature(t *testing.T) {
	cs, s := testSavedSet(t)
	if len(s.Plans) != 2 || s.Plans[0].Targets[0].Counters[0].Expected == nil || *s.Plans[0].Targets[0].Counters[0].Expected != 9 || s.Plans[1].Create == nil {
		t.Fatalf("saved %+v", s)
	}
	if len(s.Keys) != 1 || s.Keys[0].CompanyID != "8ovHrj" || s.Keys[0].KeyID != keyID("mpk_acme_key_0001") {
		t.Fatalf("keys %+v", s.Keys)
	}
	b, err := MarshalSaved(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"acme-secret", "mpk_acme_key_0001"} {
		if strings.Contains(string(b), secret) {
			t.Fatalf("the change set file holds %q", secret)
		}
	}
	k := testSetKeys()["acme"]
	mac := hex.EncodeToString(k.mac)
	for _, shown := range []string{fmt.Sprint(k), fmt.Sprintf("%+v", k), fmt.Sprintf("%#v", k), fmt.Sprintf("%v", testSetKeys())} {
		if strings.Contains(shown, mac) || strings.Contains(shown, "acme-secret") || !strings.Contains(shown, "acme") {
			t.Errorf("a key prints as %q", shown)
		}
	}
	back, err := scanWhole(b)
	if err != nil || back.Signature != s.Signature {
		t.Fatalf("ScanSaved: %v", err)
	}
	if err := back.check(pipeline.DefaultCatalog()); err != nil {
		t.Fatal(err)
	}
	if err := back.Verify(testService, testSetKeys()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// The same service spelt with its default port... is another service
	// here (8080 is not a default port); a trailing slash is the same one.
	if err := back.Verify(testService+"/", testSetKeys()); err != nil {
		t.Fatalf("Verify(service with slash): %v", err)
	}
	if _, err := scanWhole([]byte(`{"plans": []}`)); !errors.Is(err, ErrNotChangeSet) {
		t.Errorf("other JSON: %v", err)
	}
	// A failed plan cannot be saved.
	cs.Plans = append(cs.Plans, diff.Failed(cs.Plans[0].Input, "company not found"))
	if _, err := SaveChangeSet(cs, testService, nil, time.Now(), pipeline.DefaultCatalog(), testSetKeys()); err == nil || !strings.Contains(err.Error(), "company not found") {
		t.Errorf("failed plan saved: %v", err)
	}
}

// TestEditedSavedChangeSetRefused: every edit of a signed set is refused
// as a *SavedSetError (exit 2), whether the file is re-signed with a
// plain SHA-256, stripped of its signature, or taken to another service or
// account.
func TestEditedSavedChangeSetRefused(t *testing.T) {
	_, s := testSavedSet(t)
	b, _ := MarshalSaved(s)
	orig := string(b)
	plainSHA := func(text string) string {
		// What the first change sets did: SHA-256 of the content.
		sum := sha256.Sum256([]byte(strings.Replace(text, s.Signature, "", 1)))
		return strings.Replace(text, s.Signature, hex.EncodeToString(sum[:]), 1)
	}
	otherKaroo := SetKeys{"acme": NewSetKey("acme", "8ovHrj", "mpk_karoo_key_002", "karoo-secret")}
	otherCompany := SetKeys{"acme": NewSetKey("acme", "Zz9", "mpk_acme_key_0001", "acme-secret")}
	otherSecret := SetKeys{"acme": NewSetKey("acme", "8ovHrj", "mpk_acme_key_0001", "another-secret")}
	for _, tc := range []struct {
		name    string
		text    string
		service string
		keys    SetKeys
		want    string
	}{
		{"value changed", strings.Replace(orig, `"new": 1`, `"new": 999`, 1), "", nil, "signature does not match"},
		{"value changed, plain SHA-256", plainSHA(strings.Replace(orig, `"new": 1`, `"new": 999`, 1)), "", nil, "signature does not match"},
		{"expected changed", strings.Replace(orig, `"expected": 9`, `"expected": 8`, 1), "", nil, "signature does not match"},
		{"plan renamed", strings.Replace(orig, `"name": "New"`, `"name": "Newer"`, 1), "", nil, "signature does not match"},
		{"company in file changed", strings.Replace(orig, `"company_id": "8ovHrj"`, `"company_id": "Zz9"`, 1), "", nil, "company"},
		{"signature stripped", strings.Replace(orig, s.Signature, "", 1), "", nil, "no signature"},
		{"signature field removed", strings.Replace(orig, `,
  "signature": "`+s.Signature+`"`, "", 1), "", nil, `"signature" is missing`},
		{"other service", orig, "http://127.0.0.1:9090", nil, "signed for the service"},
		{"other account's key pair", orig, "", otherKaroo, "holds the key pair"},
		{"other company", orig, "", otherCompany, "is company"},
		{"same key id, other secret", orig, "", otherSecret, "signature does not match"},
		{"account not configured", orig, "", SetKeys{"karoo": testSetKeys()["karoo"]}, "not configured"},
		{"unknown field", strings.Replace(orig, `"service"`, `"extra": 1, "service"`, 1), "", nil, "unknown field"},
		{"version 1", strings.Replace(orig, SavedSetSchema, "eepipe.changeset/v1", 1), "", nil, "plain SHA-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			service, keys := testService, testSetKeys()
			if tc.service != "" {
				service = tc.service
			}
			if tc.keys != nil {
				keys = tc.keys
			}
			got, err := scanWhole([]byte(tc.text))
			if err == nil {
				err = got.Verify(service, keys)
			}
			if err == nil || errors.Is(err, ErrNotChangeSet) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.want)
			}
			var se *SavedSetError
			if !errors.As(err, &se) && !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("err = %T %v, want a *SavedSetError", err, err)
			}
		})
	}
}

// TestSavedChangeSetValuesChecked: a value no workbook cell could hold is
// refused by Check, whatever the signature says.
func TestSavedChangeSetValuesChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *SavedChangeSet)
		want string
	}{
		{"int64 max", func(s *SavedChangeSet) { s.Plans[0].Targets[0].Counters[0].New = 9223372036854775807 }, "too large"},
		{"2^53+1", func(s *SavedChangeSet) { s.Plans[0].Targets[0].Counters[0].New = 1<<53 + 1 }, "too large"},
		{"negative", func(s *SavedChangeSet) { s.Plans[0].Targets[0].Counters[0].New = -1 }, "negative"},
		{"negative expected", func(s *SavedChangeSet) { s.Plans[0].Targets[0].Counters[0].Expected = diff.Ptr(int64(-3)) }, "negative"},
		{"unknown counter", func(s *SavedChangeSet) {
			s.Plans[0].Targets[0].Counters[0].Counter = "number_of_martian_male_top_managers"
		}, "not in the counter catalog"},
		{"counter twice", func(s *SavedChangeSet) {
			t := &s.Plans[0].Targets[0]
			t.Counters = append(t.Counters, t.Counters[0])
		}, "written twice"},
		{"formula name", func(s *SavedChangeSet) { s.Plans[1].Create.Name = `=HYPERLINK("http://evil","x")` }, "formula"},
		{"formula name field", func(s *SavedChangeSet) {
			s.Plans[0].Fields = append(s.Plans[0].Fields, SavedField{Field: "name", Expected: "Acme", New: "@SUM(A1)"})
		}, "formula"},
		{"name with control character", func(s *SavedChangeSet) { s.Plans[1].Create.Name = "New\x07" }, "control character"},
		{"name error value", func(s *SavedChangeSet) { s.Plans[1].Create.Name = "#REF!" }, "error value"},
		{"name too long", func(s *SavedChangeSet) { s.Plans[1].Create.Name = strings.Repeat("n", pipeline.MaxPlanNameLen+1) }, "at most"},
		{"unknown sector", func(s *SavedChangeSet) {
			s.Plans[0].Fields = append(s.Plans[0].Fields, SavedField{Field: "sector", New: "Piracy"})
		}, "sectors"},
		{"unknown field", func(s *SavedChangeSet) {
			s.Plans[0].Fields = append(s.Plans[0].Fields, SavedField{Field: "end_date", New: "2031-08-31"})
		}, "not one apply writes"},
		{"target type", func(s *SavedChangeSet) { s.Plans[0].Targets[0].TargetType = "all" }, "target type"},
		{"year number", func(s *SavedChangeSet) { s.Plans[0].Targets[0].YearNumber = 0 }, "year number"},
		{"financial year", func(s *SavedChangeSet) { s.Plans[0].Targets[0].FinancialYear = "2026-27" }, "financial year"},
		{"update without plan id", func(s *SavedChangeSet) { s.Plans[0].PlanID = 0 }, "must name a stored plan"},
		{"create without request", func(s *SavedChangeSet) { s.Plans[1].Create = nil }, "no create request"},
		{"dates reversed", func(s *SavedChangeSet) { s.Plans[1].Create.EndDate = pipelinetest.Day("2020-01-01") }, "before start date"},
		{"account not signed for", func(s *SavedChangeSet) { s.Plans[0].Account = "karoo" }, "not one the set was signed for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := testSavedSet(t)
			tc.edit(s)
			err := s.check(pipeline.DefaultCatalog())
			var se *SavedSetError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want a *SavedSetError saying %q", err, tc.want)
			}
		})
	}
}

// TestSaveRefusesFormulaName: diff -o refuses to write a set whose plan
// name a spreadsheet would run, or that holds ESC, CR or U+202E: the rule
// a workbook's plan_name is read with (checkNameText).
func TestSaveRefusesFormulaName(t *testing.T) {
	for name, want := range map[string]string{`=HYPERLINK("http://evil","x")`: "formula", "@cmd": "formula",
		"Plan \x1b[31m": "control character", "Plan\rX": "control character", "Plan \u202Efdp.exe": "bidirectional"} {
		d := diff.Diff(pipelinetest.InPlan("", name, "2026-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Wfs: 4}), nil, diff.DiffOptions{})
		d.Account = "acme"
		_, err := SaveChangeSet(&diff.ChangeSet{Plans: []*diff.PlanDiff{d}}, testService, nil, time.Now(), pipeline.DefaultCatalog(), testSetKeys())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SaveChangeSet(%q) = %v, want a refusal saying %q", name, err, want)
		}
	}
}
