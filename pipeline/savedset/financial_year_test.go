package savedset

import "testing"

// TestReadFinancialYear: a change set's financial year is read by the
// model's parser, in the one spelling a change set is written with.
func TestReadFinancialYear(t *testing.T) {
	if fy, err := ReadFinancialYear("2026/27"); err != nil || int(fy) != 2026 {
		t.Errorf("2026/27 = %v, %v", fy, err)
	}
	for _, s := range []string{"2026/2027", "FY2027", " 2026/27", "2026/27 ", "2026/28", "2026-27", ""} {
		if fy, err := ReadFinancialYear(s); err == nil {
			t.Errorf("%q read as %v", s, fy)
		}
	}
}
