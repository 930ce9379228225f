package table

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadRawCSV: whatever the bytes, ReadRawCSV returns a header with a
// target_type column and rows below it, or an error; it never panics, and
// its canonical names are one per header text.
func FuzzReadRawCSV(f *testing.F) {
	f.Add([]byte("plan_name,start_date,year_number,target_type,number_of_african_male_top_managers\nA,2025-09-01,1,all_employees,3\n"))
	f.Add([]byte("\xef\xbb\xbfsep=;\r\nplan_name;target_type\r\n\"x\ny\";all_employees\r\n"))
	f.Add([]byte("title\n\nplan_name\ttarget_type\tcounter\tvalue\nA\tall_employees\tnumber_of_x\t'=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.csv")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		want := map[int]bool{}
		for i := 1; i < 40; i++ {
			want[i] = true
		}
		raw, err := ReadRawCSV(path, nil, nil, want)
		if err != nil {
			return
		}
		if !csvIsHeaderRow(raw.Header) || len(raw.Names) != len(raw.Header) {
			t.Fatalf("header %q, names %q", raw.Header, raw.Names)
		}
		for line := range raw.Rows {
			if line <= raw.HeaderRow {
				t.Fatalf("row %d at or above the header row %d", line, raw.HeaderRow)
			}
		}
	})
}
