package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// TestEncodingMatchesEncodingJSON checks that the hand-built JSON of plans,
// list entries and targets is byte for byte what encoding/json writes for
// the apiclient types the client decodes, for names that need escaping.
func TestEncodingMatchesEncodingJSON(t *testing.T) {
	srv := startSandbox(t, Options{})
	c := srv.as(t, acmeKey, acmeSecret)
	for i, name := range []string{"", "Plain", `<b>"Q&A"</b> \ tab	end`, "Zoë – 𝄞 \u2028", "bad \xff utf-8"} {
		nameJSON, _ := json.Marshal(name)
		body := planBody(fmt.Sprintf(`"name":%s,"start_date":"2025-09-01","end_date":"2027-08-31"`, nameJSON))
		if i%2 == 1 {
			body = planBody(fmt.Sprintf(`"name":%s,"start_date":"2026-02-01","end_date":"2031-01-01","scorecard_id":"scorecard_acme_2025","sector":"Wholesale and Retail Trade; Repair of Motor Vehicles and Motorcycles"`, nameJSON))
		}
		created := c.createPlan(body)
		c.must(200, "PATCH", targetPath(created, 0, 1), targetBody(`"number_of_indian_female_top_managers":123456789`))
	}
	for _, pl := range srv.Sandbox.accountPlans("acme") {
		pl.mu.Lock()
		want, _ := json.Marshal(pl.wire(true))
		if got := pl.fullJSON(); !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("plan %d:\n got %s\nwant %s", pl.id, got, want)
		}
		want, _ = json.Marshal(pl.wire(false))
		if got := pl.briefJSON(); !bytes.Equal(got, want) {
			t.Errorf("list entry %d:\n got %s\nwant %s", pl.id, got, want)
		}
		for _, m := range pl.milestones {
			for _, tg := range m.targets {
				want, _ := json.Marshal(tg.wire())
				if got := tg.encode(); !bytes.Equal(got, append(want, '\n')) {
					t.Errorf("target %d:\n got %s\nwant %s", tg.id, got, want)
				}
			}
		}
		pl.mu.Unlock()
	}
	// What the network carries is the same.
	r := c.must(200, "GET", plansPath, "")
	var list []json.RawMessage
	r.decode(t, &list)
	if len(list) != 5 {
		t.Fatalf("%d plans listed", len(list))
	}
}
