package pipeline

import "strconv"

// Plural returns n followed by the noun in the number n needs: "1 target",
// "0 targets", "2 targets". The plural is the singular with an "s" unless
// many gives it ("1 person", "3 people"). Every count eepipe prints for
// people goes through it.
func Plural(n int, one string, many ...string) string {
	return strconv.Itoa(n) + " " + PluralNoun(n, one, many...)
}

// PluralNoun returns the noun alone in the number n needs.
func PluralNoun(n int, one string, many ...string) string {
	if n == 1 || n == -1 {
		return one
	}
	if len(many) > 0 {
		return many[0]
	}
	return one + "s"
}
