package xlsx

import (
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"pgregory.net/rapid"
)

// TestExcelSerial pins serials Excel shows, in both date systems.
func TestExcelSerial(t *testing.T) {
	for _, tc := range []struct {
		date     string
		date1904 bool
		want     float64
	}{
		{"1900-01-01", false, 1},
		{"1900-02-28", false, 59},
		{"1900-03-01", false, 61}, // after the phantom 29 February 1900
		{"2026-09-01", false, 46266},
		{"2099-12-31", false, 73050},
		{"1904-01-01", true, 0},
		{"1904-01-02", true, 1},
		{"2026-09-01", true, 44804},
	} {
		d, err := time.Parse(time.DateOnly, tc.date)
		if err != nil {
			t.Fatal(err)
		}
		if got := ExcelSerial(d.Add(13*time.Hour), tc.date1904); got != tc.want {
			t.Errorf("ExcelSerial(%s, 1904=%v) = %v, want %v", tc.date, tc.date1904, got, tc.want)
		}
	}
}

// TestExcelSerialInvertsExcelize: excelize.ExcelDateToTime, by which
// eepipe reads serials, gives back the date ExcelSerial wrote, in both
// date systems.
func TestExcelSerialInvertsExcelize(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		date1904 := rapid.Bool().Draw(t, "date1904")
		d := time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rapid.IntRange(0, 80000).Draw(t, "days"))
		if date1904 && d.Year() < 1905 {
			d = d.AddDate(5, 0, 0)
		}
		n := ExcelSerial(d, date1904)
		back, err := excelize.ExcelDateToTime(n, date1904)
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(d) {
			t.Fatalf("ExcelDateToTime(ExcelSerial(%s, %v) = %v) = %s", d.Format(time.DateOnly), date1904, n, back)
		}
	})
}
