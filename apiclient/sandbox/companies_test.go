package sandbox

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/eepipe/eepipe/apiclient"
)

func TestCompanySearch(t *testing.T) {
	srv := startSandbox(t, Options{})
	search := func(user, pass string, q url.Values) (int, []apiclient.Company, http.Header) {
		req, _ := http.NewRequest("GET", srv.URL+"/api/companies?"+q.Encode(), nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := testHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []apiclient.Company
		if resp.StatusCode == 200 {
			if err := jsonDecode(resp, &out); err != nil {
				t.Fatal(err)
			}
			if out == nil {
				t.Fatal("200 with null instead of an array")
			}
		}
		return resp.StatusCode, out, resp.Header
	}
	ids := func(cs []apiclient.Company) (out []string) {
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	const u, p = "consultant", "sandbox-lookup-pass"
	tests := []struct {
		name       string
		user, pass string
		q          url.Values
		status     int
		want       []string
	}{
		{"vat", u, p, url.Values{"vat_number": {"4012345678"}}, 200, []string{"8ovHrj"}},
		{"vat with leading zero", u, p, url.Values{"vat_number": {"0412345678"}}, 200, []string{"Mk3Pq7"}},
		{"vat without the leading zero", u, p, url.Values{"vat_number": {"412345678"}}, 200, nil},
		{"registration", u, p, url.Values{"registration_number": {"2015/123456/07"}}, 200, []string{"Q2wE9z"}},
		{"id number", u, p, url.Values{"id_number": {"8001015009087"}}, 200, []string{"Mk3Pq7"}},
		{"OR over parameters", u, p, url.Values{"vat_number": {"4012345678"}, "registration_number": {"2015/123456/07"}, "id_number": {"none"}}, 200, []string{"8ovHrj", "Q2wE9z"}},
		{"same company twice", u, p, url.Values{"vat_number": {"4012345678"}, "registration_number": {"2009/012345/07"}}, 200, []string{"8ovHrj"}},
		{"no match", u, p, url.Values{"vat_number": {"4999999999"}}, 200, nil},
		{"no parameter", u, p, url.Values{}, 400, nil},
		{"empty parameters", u, p, url.Values{"vat_number": {""}}, 400, nil},
		{"other parameter only", u, p, url.Values{"name": {"Acme"}}, 400, nil},
		{"no credentials", "", "", url.Values{"vat_number": {"4012345678"}}, 401, nil},
		{"wrong password", u, "nope", url.Values{"vat_number": {"4012345678"}}, 401, nil},
		{"unknown user", "nobody", p, url.Values{"vat_number": {"4012345678"}}, 401, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, got, h := search(tc.user, tc.pass, tc.q)
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			if status == 401 && h.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if len(got) != len(tc.want) || (len(got) > 0 && !equalStrings(ids(got), tc.want)) {
				t.Errorf("got %v, want %v", ids(got), tc.want)
			}
		})
	}
	_, got, _ := search(u, p, url.Values{"id_number": {"8001015009087"}})
	c := got[0]
	if c.RegistrationNumber != nil || c.IdentificationNumber == nil || c.TradingName != "Karoo Sole Trader" || c.Region == "" || c.Commodity == "" {
		t.Errorf("record %+v", c)
	}
	// The plan API key does not open the lookup.
	r := srv.as(t, acmeKey, acmeSecret).do("GET", "/api/companies?vat_number=4012345678", "")
	if r.status != 401 {
		t.Errorf("HMAC on the lookup: %d", r.status)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
