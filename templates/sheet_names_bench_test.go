package templates_test

import (
	"fmt"
	"testing"

	"github.com/eepipe/eepipe/templates"
)

// BenchmarkSheetNames2000: the sheet names of a 2,000-plan grid export
// (SheetNames: one set of taken names, not the list folded again per
// sheet).
func BenchmarkSheetNames2000(b *testing.B) {
	for range b.N {
		s := templates.NewSheetNames(nil)
		for i := range 2000 {
			s.Name(fmt.Sprintf("Acme Foods plan %04d", i), "x")
		}
	}
}
