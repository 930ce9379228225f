package profile

import (
	"strings"
)

// Grade returns the occupational level a job grade is by form EEA9's table
// of Paterson grades: classic A1-A3 (unskilled), B1-B5 (semi-skilled),
// C1-C5 (skilled technical / junior management), D1-D5 (middle
// management), E1-E5 (senior management), F1-F5, F+ and G (top
// management); modern A, B Lower, B Upper ... F Upper the same by their
// band letter. A band letter alone is its band. folded is the grade as
// templates.Normalize folds it ("F+" folds to "f", "B-Upper" to "b
// upper"). Any other grading (Peromnes, Hay, a client's own bands) is
// taught in a mapping file's grades.
func Grade(folded string) (string, bool) {
	s := strings.ReplaceAll(folded, " ", "")
	if s == "" {
		return "", false
	}
	level, ok := patersonBands[s[0]]
	if !ok {
		return "", false
	}
	rest := s[1:]
	switch {
	case rest == "":
		return level, true
	case (rest == "lower" || rest == "upper" || rest == "l" || rest == "u") && s[0] != 'g':
		return level, true
	case len(rest) == 1 && rest[0] >= '1' && rest[0] <= maxSubgrade(s[0]):
		return level, true
	}
	return "", false
}

// patersonBands are the Paterson bands' occupational levels (EEA9).
var patersonBands = map[byte]string{
	'a': "unskilled_employees",
	'b': "semi_skilled_employees",
	'c': "junior_managers",
	'd': "middle_managers",
	'e': "senior_managers",
	'f': "top_managers",
	'g': "top_managers",
}

// maxSubgrade is the highest numbered subgrade of a classic Paterson band:
// A1-A3, B1-B5 ... F1-F5; G has none.
func maxSubgrade(band byte) byte {
	switch band {
	case 'a':
		return '3'
	case 'g':
		return '0' // none
	}
	return '5'
}
