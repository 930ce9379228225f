package assemble

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/eepipe/eepipe/pipeline"
	"pgregory.net/rapid"
)

// identifierSpelling draws a spelling of the identifier id (letters and
// digits): separators South African forms use between its characters,
// letters in either case, spaces around it.
func identifierSpelling(t *rapid.T, id, label string) string {
	seps := []string{"", "", "", "/", "-", " ", ".", "\u00a0", "\u2009"}
	var b strings.Builder
	b.WriteString(rapid.SampledFrom([]string{"", " ", "  ", "\t"}).Draw(t, label+"_lead"))
	for i, r := range id {
		if i > 0 {
			b.WriteString(rapid.SampledFrom(seps).Draw(t, label+"_sep"))
		}
		if rapid.Bool().Draw(t, label+"_lower") {
			b.WriteString(strings.ToLower(string(r)))
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteString(rapid.SampledFrom([]string{"", " ", "\u00a0"}).Draw(t, label+"_trail"))
	return b.String()
}

// TestGroupingFollowsSameIdentifier: two rows of one plan are one plan
// exactly when sameIdentifier takes their identifiers for one, whichever
// the spellings, and no row is reported for it.
func TestGroupingFollowsSameIdentifier(t *testing.T) {
	col := map[string]string{"vat": pipeline.ColCompanyVAT, "reg": pipeline.ColCompanyRegistration, "id": pipeline.ColCompanyIDNumber}
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]string{"vat", "reg", "id"}).Draw(t, "kind")
		id := rapid.StringMatching(`[0-9A-Z]{1,14}`).Draw(t, "id")
		a := identifierSpelling(t, id, "a")
		b := a
		switch rapid.IntRange(0, 2).Draw(t, "how") {
		case 0: // another spelling of the same identifier
			b = identifierSpelling(t, id, "b")
		case 1: // another identifier, spelt some way
			b = identifierSpelling(t, rapid.StringMatching(`[0-9A-Z]{1,14}`).Draw(t, "other"), "b")
		}
		n := "number_of_african_male_top_managers"
		rec := func(line int, ident, year string) pipeline.Record {
			return row("p.csv", line, col[kind], ident, pipeline.ColPlanName, "Gap Plan", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2027-08-31",
				pipeline.ColYearNumber, year, pipeline.ColTargetType, pipeline.TargetAll, n, "3")
		}
		plans, ps := assemble([]pipeline.Record{rec(2, a, "1"), rec(3, b, "2")}, nil)
		if ps.HasErrors() {
			t.Fatalf("%q and %q: errors:\n%s", a, b, messages(ps))
		}
		want := 2
		if pipeline.SameIdentifier(a, b) {
			want = 1
		}
		if len(plans) != want {
			t.Fatalf("%q and %q (sameIdentifier %v): %d plans, want %d", a, b, pipeline.SameIdentifier(a, b), len(plans), want)
		}
		if want == 1 && len(plans[0].Targets) != 2 {
			t.Fatalf("%q and %q: the plan has %d targets, want both rows", a, b, len(plans[0].Targets))
		}
	})
}

// TestSameIdentifierSpellings: the spellings sameIdentifier takes for one
// identifier key alike (IdentifierKey), and sameIdentifier is symmetric.
func TestSameIdentifierSpellings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.StringMatching(`[0-9A-Z]{1,14}`).Draw(t, "id")
		a, b := identifierSpelling(t, id, "a"), identifierSpelling(t, id, "b")
		if !pipeline.SameIdentifier(a, b) || !pipeline.SameIdentifier(b, a) || pipeline.IdentifierKey(a) != pipeline.IdentifierKey(b) || pipeline.IdentifierKey(a) != id {
			t.Fatalf("%q and %q: sameIdentifier %v/%v, keys %q %q", a, b, pipeline.SameIdentifier(a, b), pipeline.SameIdentifier(b, a), pipeline.IdentifierKey(a), pipeline.IdentifierKey(b))
		}
	})
}

// TestNameKeyIsSameName: nameKey keys alike exactly the names sameName
// takes for one.
func TestNameKeyIsSameName(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alpha := []rune("aAbBkKsSſKΣσςÅåǅǄǆ 1-")
		var a, b string
		if rapid.Bool().Draw(t, "any") {
			a, b = rapid.String().Draw(t, "a"), rapid.String().Draw(t, "b")
		} else {
			a = rapid.StringOfN(rapid.SampledFrom(alpha), 0, 6, -1).Draw(t, "a")
			b = rapid.StringOfN(rapid.SampledFrom(alpha), 0, 6, -1).Draw(t, "b")
		}
		if (pipeline.NameKey(a) == pipeline.NameKey(b)) != pipeline.SameName(a, b) {
			t.Fatalf("%q and %q: keys %q %q, sameName %v", a, b, pipeline.NameKey(a), pipeline.NameKey(b), pipeline.SameName(a, b))
		}
	})
}

func TestGroupingTable(t *testing.T) {
	n := "number_of_african_male_top_managers"
	base := func(line int, year string, kv ...string) pipeline.Record {
		return row("p.csv", line, append([]string{pipeline.ColPlanName, "Crane Plan", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2027-08-31",
			pipeline.ColYearNumber, year, pipeline.ColTargetType, pipeline.TargetAll, n, "3"}, kv...)...)
	}
	for _, tc := range []struct {
		name  string
		recs  []pipeline.Record
		plans int
		err   string // an error every run reports, or ""
		warn  string
	}{
		{name: "registration with / and -", plans: 1, recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyRegistration, "2011/004512/07"),
			base(3, "2", pipeline.ColCompanyRegistration, "2011-004512-07"),
		}},
		{name: "VAT with spaces and around spaces", plans: 1, recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyVAT, "4012345678"),
			base(3, "2", pipeline.ColCompanyVAT, " 401 234 5678 "),
		}},
		{name: "ID number with lower-case letters", plans: 1, recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyIDNumber, "AB123"),
			base(3, "2", pipeline.ColCompanyIDNumber, "ab 123"),
		}},
		{name: "account in another case", plans: 1, recs: []pipeline.Record{
			base(2, "1", pipeline.ColAccount, "Acme"),
			base(3, "2", pipeline.ColAccount, "ACME"),
		}},
		{name: "more identifiers on one row", plans: 1, recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyVAT, "4012345678", pipeline.ColCompanyRegistration, "2011/004512/07"),
			base(3, "2", pipeline.ColCompanyVAT, "4012345678", pipeline.ColCompanyRegistration, "2011-004512-07"),
		}},
		{name: "compatible identifiers, one set larger", plans: 2, err: "give different identifiers", recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyVAT, "4012345678"),
			base(3, "2", pipeline.ColCompanyVAT, "401 234 5678", pipeline.ColCompanyRegistration, "2011-004512-07"),
		}},
		{name: "plan name in another case", plans: 1, err: "plan_name disagrees with an earlier row", recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyVAT, "4012345678"),
			row("p.csv", 3, pipeline.ColCompanyVAT, "4012345678", pipeline.ColPlanName, "CRANE PLAN", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2027-08-31",
				pipeline.ColYearNumber, "2", pipeline.ColTargetType, pipeline.TargetAll, n, "3"),
		}},
		{name: "plan_id on one row, the name in other case on another", plans: 2, err: "give different identifiers", recs: []pipeline.Record{
			base(2, "1", pipeline.ColPlanID, "17"),
			row("p.csv", 3, pipeline.ColPlanName, "CRANE PLAN", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2027-08-31",
				pipeline.ColYearNumber, "2", pipeline.ColTargetType, pipeline.TargetAll, n, "3"),
		}},
		{name: "different registrations", plans: 2, recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyRegistration, "2011/004512/07"),
			base(3, "2", pipeline.ColCompanyRegistration, "2011/004512/08"),
		}},
		{name: "a dash is no identifier", plans: 1, warn: `company_vat_number "-" has no letter or digit`, recs: []pipeline.Record{
			base(2, "1", pipeline.ColCompanyVAT, "-", pipeline.ColCompanyRegistration, "2011/004512/07"),
			base(3, "2", pipeline.ColCompanyRegistration, "2011/004512/07"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, ps := assemble(tc.recs, nil)
			if len(plans) != tc.plans {
				t.Errorf("%d plans, want %d\n%s", len(plans), tc.plans, messages(ps))
			}
			if tc.err == "" && ps.HasErrors() {
				t.Errorf("errors:\n%s", messages(ps))
			}
			if tc.err != "" {
				wantProblem(t, ps, pipeline.Error, tc.err)
			}
			if tc.warn != "" {
				wantProblem(t, ps, pipeline.Warning, tc.warn)
				if p := plans[0]; p.Company.VAT != "" {
					t.Errorf("VAT %q, want none", p.Company.VAT)
				}
			}
		})
	}
}

// TestSkippedYears: the years inside the dates between the first and the
// last year a plan's rows give, and only those.
func TestSkippedYears(t *testing.T) {
	n := "number_of_african_male_top_managers"
	for _, tc := range []struct {
		name   string
		years  []string // year_number or financial_year per row
		planID string
		want   string // the skipped years in the warning, or "" for none
	}{
		{name: "years 1, 2, 4, 5", years: []string{"1", "2", "4", "5"}, want: "skips year 3 (2027/28): its rows give years 1, 2, 4 and 5 of the plan's 5 financial years (2025/26 to 2029/30)"},
		{name: "financial years", years: []string{"2025/26", "2028/29"}, want: "skips years 2 (2026/27) and 3 (2027/28): its rows give years 1 and 4"},
		{name: "mixed", years: []string{"1", "2027/28", "5"}, want: "skips years 2 (2026/27) and 4 (2028/29)"},
		{name: "contiguous", years: []string{"1", "2", "3"}},
		{name: "later years only", years: []string{"3", "4", "5"}},
		{name: "one year", years: []string{"2"}},
		{name: "an existing plan", years: []string{"1", "5"}, planID: "17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []pipeline.Record
			for i, y := range tc.years {
				col := pipeline.ColYearNumber
				if strings.Contains(y, "/") {
					col = pipeline.ColFinancialYear
				}
				kv := []string{col, y, pipeline.ColTargetType, pipeline.TargetAll, n, "3"}
				if tc.planID != "" {
					kv = append(kv, pipeline.ColPlanID, tc.planID)
				} else {
					kv = append(kv, pipeline.ColCompanyVAT, "4012345678", pipeline.ColPlanName, "Gap Plan", pipeline.ColStartDate, "2025-09-01", pipeline.ColEndDate, "2030-08-31")
				}
				recs = append(recs, row("p.csv", i+2, kv...))
			}
			plans, ps := assemble(recs, nil)
			if ps.HasErrors() || len(plans) != 1 {
				t.Fatalf("%d plans; problems:\n%s", len(plans), messages(ps))
			}
			var got []string
			for _, p := range ps {
				if strings.Contains(p.Message, "skips") {
					got = append(got, p.Message)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("unexpected warning: %v", got)
			case tc.want != "":
				w := wantProblem(t, ps, pipeline.Warning, tc.want)
				for _, s := range []string{`plan "Gap Plan" starting 2025-09-01`, "If the plan is new", "with zeros"} {
					if !strings.Contains(w.Message, s) {
						t.Errorf("warning lacks %q: %s", s, w.Message)
					}
				}
				if len(got) != 1 {
					t.Errorf("%d warnings, want one for the plan: %v", len(got), got)
				}
			}
			if tc.planID == "" {
				if n := len(pipeline.SkippedYears(plans[0])); (n > 0) != (tc.want != "") {
					t.Errorf("skippedYears: %v", pipeline.SkippedYears(plans[0]))
				}
			}
		})
	}
}

func Example_skippedYears() {
	p := &pipeline.InputPlan{StartDate: pipeline.Date{Year: 2025, Month: 9, Day: 1}, EndDate: pipeline.Date{Year: 2030, Month: 8, Day: 31}}
	for _, y := range []int{1, 2, 4, 5} {
		p.Targets = append(p.Targets, &pipeline.InputTarget{YearNumber: y, TargetType: pipeline.TargetAll})
	}
	fmt.Println(pipeline.SkippedYears(p))
	// Output: [2027/28]
}

func TestStandardSpelling(t *testing.T) {
	for _, tc := range []struct{ in, want pipeline.CompanyIDs }{
		{pipeline.CompanyIDs{Registration: "2015-123456-07"}, pipeline.CompanyIDs{Registration: "2015/123456/07"}},
		{pipeline.CompanyIDs{Registration: " 2015 123456 07 ", VAT: "409 876 5432"}, pipeline.CompanyIDs{Registration: "2015/123456/07", VAT: "4098765432"}},
		{pipeline.CompanyIDs{IDNumber: "800101 5009 087"}, pipeline.CompanyIDs{IDNumber: "8001015009087"}},
		{pipeline.CompanyIDs{Registration: "2015/123456/07", VAT: "4098765432"}, pipeline.CompanyIDs{Registration: "2015/123456/07", VAT: "4098765432"}},
		// Not of the standard length, or with letters: kept as given.
		{pipeline.CompanyIDs{Registration: "K2015-123456-07", VAT: "409876543"}, pipeline.CompanyIDs{Registration: "K2015-123456-07", VAT: "409876543"}},
	} {
		got := pipeline.StandardSpelling(tc.in)
		if got != tc.want {
			t.Errorf("standardSpelling(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
		if !pipeline.SameCompanyIDs(got, tc.in) {
			t.Errorf("standardSpelling(%+v) = %+v names another company", tc.in, got)
		}
	}
}

// TestIdentifierKeyAnyText: the key keeps the letters (upper-cased) and
// digits of any text, in order, and only them.
func TestIdentifierKeyAnyText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		want := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToUpper(r)
			}
			return -1
		}, s)
		if got := pipeline.IdentifierKey(s); got != want || string(pipeline.AppendIdentifierKey(nil, s)) != want {
			t.Fatalf("IdentifierKey(%q) = %q, want %q", s, got, want)
		}
	})
}
