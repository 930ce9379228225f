package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSingleValueFlagsRefuseASecondValue: a flag that takes one file
// (validate --report/--annotate, apply --report, history --report, diff -o,
// export -o, template -o) given twice is a usage error (exit 2) naming both
// values, and writes nothing; before, the last value silently won and the
// first file was never written.
func TestSingleValueFlagsRefuseASecondValue(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, tc := range []struct {
		args []string
		ext  string
	}{
		{[]string{"validate", "x.csv", "--report"}, ".csv"},
		{[]string{"validate", "x.xlsx", "--annotate"}, ".xlsx"},
		{[]string{"apply", "x.csv", "--report"}, ".json"},
		{[]string{"history", "--report"}, ".json"},
		{[]string{"diff", "x.csv", "-o"}, ".json"},
		{[]string{"export", "-o"}, ".csv"},
		{[]string{"template", "-o"}, ".xlsx"},
	} {
		flag := tc.args[len(tc.args)-1]
		args := append(append([]string{}, tc.args...), a+tc.ext, flag, b+tc.ext)
		var out, errb strings.Builder
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(string) string { return "" }}
		code := Execute(context.Background(), f, args)
		if code != ExitInvalid {
			t.Errorf("eepipe %s: exit %d, want %d\n%s", strings.Join(args, " "), code, ExitInvalid, errb.String())
		}
		if msg := errb.String(); !strings.Contains(msg, "given twice") || !strings.Contains(msg, filepath.Base(a+tc.ext)) || !strings.Contains(msg, filepath.Base(b+tc.ext)) {
			t.Errorf("eepipe %s: message does not name both values:\n%s", strings.Join(args, " "), msg)
		}
		for _, p := range []string{a + tc.ext, b + tc.ext} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("eepipe %s wrote %s", strings.Join(args, " "), p)
			}
		}
	}
}
