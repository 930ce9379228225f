package keyrotate

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestSetAccountKey: only the account's api_key (and api_key_id) change;
// comments, quoting elsewhere, order, CRLF endings and the other accounts
// stay byte for byte.
func TestSetAccountKey(t *testing.T) {
	doc := "# eepipe configuration\nbase_url: http://x # the service\naccounts:\n" +
		"  - name: acme   # first\n    api_key: mpk_old_acme  # rotated by eepipe\n    api_secret_file: acme.secret\n" +
		"  - name: crane\n    api_key: \"mpk_old_crane\"\n    api_key_id: 7\n    api_secret_env: CRANE\n"
	got, err := SetAccountKey([]byte(doc), 0, "mpk_new", 12)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(doc, "api_key: mpk_old_acme  # rotated by eepipe\n", "api_key: mpk_new  # rotated by eepipe\n    api_key_id: 12\n", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got, err = SetAccountKey([]byte(doc), 1, "mpk_new crane", 13)
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(strings.Replace(doc, `api_key: "mpk_old_crane"`, `api_key: "mpk_new crane"`, 1), "api_key_id: 7", "api_key_id: 13", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	crlf := strings.ReplaceAll(doc, "\n", "\r\n")
	got, err = SetAccountKey([]byte(crlf), 0, "mpk_new", 12)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "api_key: mpk_new  # rotated by eepipe\r\n    api_key_id: 12\r\n") || strings.Count(string(got), "\r\n") != strings.Count(crlf, "\r\n")+1 {
		t.Errorf("CRLF: %q", got)
	}
	for name, bad := range map[string]string{
		"no account":   "base_url: x\n",
		"no api_key":   "accounts:\n  - name: a\n",
		"inline":       "accounts:\n  - {name: a, api_key: k}\n",
		"block scalar": "accounts:\n  - api_key: |\n      k\n",
		"not yaml":     "accounts: [\n",
	} {
		if _, err := SetAccountKey([]byte(bad), 0, "mpk_new", 1); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzSetAccountKey: whatever the document, SetAccountKey either refuses
// it or returns one whose first account reads back with the new key and
// id, and whose other accounts read as before.
func FuzzSetAccountKey(f *testing.F) {
	f.Add("accounts:\n  - name: a\n    api_key: k\n", "mpk_x")
	f.Add("accounts:\n- api_key: 'k' # c\n  api_key_id: 3\n- api_key: z\n", "mpk y")
	f.Add("accounts:\r\n  - api_key: k", "k\"q")
	f.Fuzz(func(t *testing.T, doc, key string) {
		out, err := SetAccountKey([]byte(doc), 0, key, 42)
		if err != nil {
			return
		}
		a, err := accountNode(out, 0)
		if err != nil {
			t.Fatalf("result does not read back: %v\n%q", err, out)
		}
		if k, _ := mapValue(a, "api_key"); k == nil || k.Value != key {
			t.Fatalf("api_key not %q in %q", key, out)
		}
		var before, after struct {
			Accounts []yaml.Node `yaml:"accounts"`
		}
		if yaml.Unmarshal([]byte(doc), &before) != nil || yaml.Unmarshal(out, &after) != nil || len(before.Accounts) != len(after.Accounts) {
			t.Fatalf("accounts changed in number: %q -> %q", doc, out)
		}
	})
}
