package pipeline

// The one rule for a CSV header line's delimiter. Its home is here, not in
// formats, because the sector-targets parser (pipeline/sector) uses it
// and pipeline may not import formats; formats' CSV readers (the flat
// table, the reconcile report's copy of a CSV input) call it.

// HeaderDelimiter returns the delimiter of a CSV header line among comma,
// semicolon and tab: the one that occurs most often outside double quotes,
// comma on a tie.
func HeaderDelimiter(line string) rune {
	counts := map[rune]int{}
	inQuotes := false
	for _, r := range line {
		switch {
		case r == '"':
			inQuotes = !inQuotes
		case !inQuotes && (r == ',' || r == ';' || r == '\t'):
			counts[r]++
		}
	}
	best := ','
	for _, r := range []rune{';', '\t'} {
		if counts[r] > counts[best] {
			best = r
		}
	}
	return best
}
