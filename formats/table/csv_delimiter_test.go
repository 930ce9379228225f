package table

import "testing"

func TestCSVDelimiterDetection(t *testing.T) {
	tests := map[string]rune{
		"a,b,target_type\n":                       ',',
		"a;b;target_type\n":                       ';',
		"a\tb\ttarget_type\n":                     '\t',
		"title, with comma\na;b;target_type\n":    ';',
		"\"x;y;z\",target_type\n":                 ',',
		"plan_name;\"a,b,c,d\";target_type\n":     ';',
		"no header here\n":                        ',',
		"Title\n\nplan_id\ttarget_type\tsector\n": '\t',
	}
	for in, want := range tests {
		if got := csvDetectDelimiter([]byte(in)); got != want {
			t.Errorf("csvDetectDelimiter(%q) = %q; want %q", in, got, want)
		}
	}
}
