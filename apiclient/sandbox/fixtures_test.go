package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eepipe/eepipe/apiclient"
)

func TestEmbeddedFixturesMatchTestdata(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sandbox-fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, defaultFixturesJSON) {
		t.Fatal("apiclient/sandbox/sandbox-fixtures.json differs from testdata/sandbox-fixtures.json: copy one over the other")
	}
	fx, err := LoadFixtures(filepath.Join("..", "..", "testdata", "sandbox-fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Accounts) != len(DefaultFixtures().Accounts) {
		t.Fatal("LoadFixtures and DefaultFixtures disagree")
	}
}

func TestDefaultFixturesContent(t *testing.T) {
	fx := DefaultFixtures()
	accounts := map[string]Account{}
	for _, a := range fx.Accounts {
		accounts[a.Name] = a
	}
	if a := accounts["acme"]; a.APIKey != "mpk_sandbox_acme" || a.Secret != "sandbox-secret-acme" || a.CompanyID != "8ovHrj" {
		t.Errorf("acme %+v", a)
	}
	if a := accounts["bluecrane"]; a.APIKey != "mpk_sandbox_bluecrane" || a.Secret != "sandbox-secret-bluecrane" || a.CompanyID != "Q2wE9z" {
		t.Errorf("bluecrane %+v", a)
	}
	if len(fx.LookupUsers) == 0 || fx.LookupUsers[0] != (LookupUser{"consultant", "sandbox-lookup-pass"}) {
		t.Errorf("lookup users %+v", fx.LookupUsers)
	}
	companies := map[string]string{}
	for _, c := range fx.Companies {
		reg, idn := "null", "null"
		if c.RegistrationNumber != nil {
			reg = *c.RegistrationNumber
		}
		if c.IdentificationNumber != nil {
			idn = *c.IdentificationNumber
		}
		companies[c.ID] = strings.Join([]string{c.TradingName, c.VATNumber, reg, idn, c.Commodity, c.Region}, "|")
	}
	for id, want := range map[string]string{
		"8ovHrj": "Acme Foods (Pty) Ltd|4012345678|2009/012345/07|null|Food Services|National",
		"Q2wE9z": "Blue Crane Logistics|4098765432|2015/123456/07|null|Transport and Logistics|Gauteng",
		"Mk3Pq7": "Karoo Sole Trader|0412345678|null|8001015009087|Agriculture|Northern Cape",
	} {
		if companies[id] != want {
			t.Errorf("company %s = %q, want %q", id, companies[id], want)
		}
	}
	for _, a := range fx.Accounts {
		if a.CompanyID == "Mk3Pq7" {
			t.Error("no account owns Mk3Pq7")
		}
	}
	owner := map[string]string{}
	for _, sc := range fx.Scorecards {
		owner[sc.ID] = sc.Account
		if sc.Workforce == nil {
			continue
		}
		for _, tt := range targetTypes {
			m := sc.Workforce.counters(tt)
			if len(m) != len(served.names) {
				t.Errorf("%s %s: %d counters, want all %d", sc.ID, tt, len(m), len(served.names))
			}
			name := func(r, g, l string) string { return "number_of_" + r + "_" + g + "_" + l }
			for _, r := range counterRaces {
				for _, g := range counterGenders {
					sum := int64(0)
					for _, l := range counterLevels[:6] { // the six occupational levels
						sum += m[name(r, g, l)]
					}
					perm := m[name(r, g, "total_permanent_employees")]
					temp := m[name(r, g, "temporary_employees")]
					grand := m[name(r, g, "grand_total_employees")]
					if perm != sum || grand != perm+temp {
						t.Errorf("%s %s %s %s: total_permanent %d (levels sum %d), temporary %d, grand_total %d", sc.ID, tt, r, g, perm, sum, temp, grand)
					}
				}
			}
		}
		var all, dis int64
		for n, v := range sc.Workforce.DisabledEmployees {
			if v > sc.Workforce.AllEmployees[n] {
				t.Errorf("%s: disabled %s %d > all %d", sc.ID, n, v, sc.Workforce.AllEmployees[n])
			}
			if strings.HasSuffix(n, "grand_total_employees") {
				dis += v
				all += sc.Workforce.AllEmployees[n]
			}
		}
		if dis == 0 || dis*10 > all {
			t.Errorf("%s: %d disabled of %d employees", sc.ID, dis, all)
		}
	}
	if owner["scorecard_acme_2025"] != "acme" || owner["scorecard_acme_2026"] != "acme" || owner["scorecard_bluecrane_2025"] != "bluecrane" {
		t.Errorf("scorecards %v", owner)
	}
	// DefaultFixtures returns a fresh copy every time.
	fx.Accounts[0].Name = "changed"
	fx.Scorecards[0].Workforce.AllEmployees["number_of_african_male_top_managers"] = 12345
	again := DefaultFixtures()
	if again.Accounts[0].Name == "changed" || again.Scorecards[0].Workforce.AllEmployees["number_of_african_male_top_managers"] == 12345 {
		t.Error("DefaultFixtures shares state between calls")
	}
}

func TestLoadFixturesErrors(t *testing.T) {
	const acct = `{"name":"a","api_key":"k","secret":"s","company_id":"c"}`
	const sc = `"description":"d","start_date":"2025-01-01","end_date":"2025-12-31","charter_id":"alpha_generic","province":"National"`
	doc := func(accounts, scorecards string) string {
		return `{"accounts":[` + accounts + `],"lookup_users":[],"companies":[],"scorecards":[` + scorecards + `]}`
	}
	wf := func(all string) string {
		return `{"account":"a","id":"scorecard_x",` + sc + `,"workforce":{"all_employees":{` + all + `},"disabled_employees":{}}}`
	}
	tests := []struct{ name, json, want string }{
		{"syntax", "{\n  \"accounts\": [,]\n}", "line 2, column"},
		{"wrong type", `{"accounts":{}}`, "line 1, column 13: accounts must be an array, not a JSON object"},
		{"wrong field type", `{"companies":[{"id":"x","vat_number":4012345678}]}`, "companies.vat_number must be a string, not a JSON number"},
		{"trailing data", doc(acct, "") + "{}", "unexpected data after"},
		{"unknown scorecard account", doc(acct, `{"account":"b","id":"scorecard_x",`+sc+`}`), `scorecards[0] (scorecard_x): account "b" is not one of the accounts`},
		{"same scorecard id twice", doc(acct+`,{"name":"b","api_key":"k2","secret":"s"}`, `{"account":"a","id":"scorecard_x",`+sc+`},{"account":"b","id":"scorecard_x",`+sc+`}`), `scorecards[1] (scorecard_x): scorecard id "scorecard_x" is listed twice`},
		{"decimal counter", doc(acct, wf(`"number_of_african_male_top_managers":1.5`)), "workforce.all_employees: counter number_of_african_male_top_managers must be an integer zero or greater (got 1.5)"},
		{"negative counter", doc(acct, wf(`"number_of_african_male_top_managers":-2`)), "(got -2)"},
		{"string counter", doc(acct, wf(`"number_of_african_male_top_managers":"3"`)), `(got "3")`},
		{"missing secret", doc(`{"name":"a","api_key":"k"}`, ""), "accounts[0] (a): secret is missing"},
		{"duplicate key", doc(acct+`,{"name":"b","api_key":"k","secret":"s"}`, ""), `accounts[1] (b): api_key "k" is used by two accounts`},
		{"duplicate name", doc(acct+`,{"name":"a","api_key":"k2","secret":"s"}`, ""), `account name "a" is used twice`},
		{"bad expiry", doc(`{"name":"a","api_key":"k","secret":"s","expires_at":"soon"}`, ""), `expires_at "soon" is not an ISO 8601`},
		{"missing id", doc(acct, `{"account":"a",`+sc+`}`), "scorecards[0]: id is missing"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.json), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadFixtures(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %v does not name the file", err)
			}
			if strings.Contains(err.Error(), `"secret":"s"`) {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
	if _, err := LoadFixtures(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
	// New validates fixtures built in Go too.
	fx := DefaultFixtures()
	fx.Scorecards = append(fx.Scorecards, fx.Scorecards[0])
	if _, err := New(Options{Fixtures: fx}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("New with a duplicate scorecard: %v", err)
	}
	// A minimal valid document.
	if _, err := ParseFixtures([]byte(doc(acct, wf(`"number_of_white_female_unskilled_employees":0`)))); err != nil {
		t.Errorf("valid document: %v", err)
	}
}

// TestFixturesWarnings: scorecard fields the API would refuse and counters
// outside the default catalog do not stop the sandbox (fixtures written by
// others must load); they are reported as warnings, and the prefill leaves
// unknown counters out and takes missing ones as zero.
func TestFixturesWarnings(t *testing.T) {
	doc := `{"accounts":[{"name":"a","api_key":"k","secret":"s"}],
	  "scorecards":[
	    {"account":"a","id":"scorecard_min","workforce":{"all_employees":{"number_of_african_male_top_managers":4,"number_of_african_male_top_manager":3}}},
	    {"account":"a","id":"scorecard_odd","description":"d","start_date":"2025-01-01","end_date":"2025-12-31","charter_id":"generic","province":"Gauteng"}
	  ]}`
	fx, err := ParseFixtures([]byte(doc))
	if err != nil {
		t.Fatalf("ParseFixtures: %v", err)
	}
	warnings := strings.Join(fx.Warnings(), "\n")
	for _, want := range []string{
		"scorecards[0] (scorecard_min): description can't be blank",
		"scorecards[0] (scorecard_min): province can't be blank",
		"number_of_african_male_top_manager is not a counter of the default catalog; the prefill leaves it out (did you mean number_of_african_male_top_managers?)",
		`scorecards[1] (scorecard_odd): charter_id "generic" is not included`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	if n := len(DefaultFixtures().Warnings()); n != 0 {
		t.Errorf("the example fixtures have %d warnings: %v", n, DefaultFixtures().Warnings())
	}
	core, logs := observer.New(zap.WarnLevel)
	srv := startSandbox(t, Options{Fixtures: fx, Logger: zap.New(core)})
	if logs.Len() != len(fx.Warnings()) {
		t.Errorf("%d warnings logged, want %d", logs.Len(), len(fx.Warnings()))
	}
	c := srv.as(t, "k", "s")
	p := c.createPlan(planBody(`"start_date":"2025-09-01","end_date":"2026-08-31","scorecard_id":"scorecard_min"`))
	all := p.Milestones[0].Targets[0].Counters
	if all["number_of_african_male_top_managers"] != 4 || all["number_of_white_female_top_managers"] != 0 || len(all) != 90 {
		t.Errorf("prefill: %d counters, %v", len(all), all["number_of_african_male_top_managers"])
	}
	if _, ok := all["number_of_african_male_top_manager"]; ok {
		t.Error("the prefill copied a counter outside the catalog")
	}
	var sc apiclient.Scorecard
	c.must(200, "GET", scorecardsURL+"/scorecard_min", "").decode(t, &sc)
	if sc.ID != "scorecard_min" || sc.Description != "" || sc.CreatedAt == "" {
		t.Errorf("scorecard %+v", sc)
	}
}
