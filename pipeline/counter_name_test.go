package pipeline

import "testing"

// TestIsCounterName: a counter column is one that starts with the counter
// prefix, whatever follows; nothing else is.
func TestIsCounterName(t *testing.T) {
	for name, want := range map[string]bool{
		CounterName("african", "male", "top_management"): true,
		"number_of_":   true,
		"numberof_x":   false,
		"plan_name":    false,
		"":             false,
		" number_of_a": false,
	} {
		if got := IsCounterName(name); got != want {
			t.Errorf("IsCounterName(%q) = %v", name, got)
		}
	}
}
