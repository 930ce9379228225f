package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// parseCounter reads a counter value: a JSON integer literal (no fraction,
// no exponent) that is zero or greater. msg names the problem otherwise.
func parseCounter(raw json.RawMessage) (n int64, msg string) {
	t := string(bytes.TrimSpace(raw))
	bad := "must be an integer zero or greater (got " + shorten(t) + ")"
	if !isIntegerLiteral(t) {
		return 0, bad
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, "is too large (got " + shorten(t) + ")"
	}
	if v < 0 {
		return 0, bad
	}
	return v, ""
}

// isIntegerLiteral reports whether t is a JSON number without fraction or
// exponent.
func isIntegerLiteral(t string) bool {
	t = strings.TrimPrefix(t, "-")
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return len(t) == 1 || t[0] != '0'
}

func shorten(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// decodeWrapped parses a body of the form {"<key>": {...}} and returns the
// inner object's fields. status is 0 on success, else the status to answer
// with msg.
func decodeWrapped(body []byte, key string) (fields map[string]json.RawMessage, status int, msg string) {
	if fields, ok := plainWrapped(body, key); ok {
		return fields, 0, ""
	}
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil {
		var top any
		if json.Unmarshal(body, &top) == nil {
			return nil, 422, fmt.Sprintf(`the body must be an object {"%s": {...}}`, key)
		}
		return nil, 400, "the request body is not valid JSON: " + err.Error()
	}
	inner, ok := outer[key]
	if !ok || string(bytes.TrimSpace(inner)) == "null" {
		return nil, 422, fmt.Sprintf(`%s is missing: send {"%s": {...}}`, key, key)
	}
	if err := json.Unmarshal(inner, &fields); err != nil || fields == nil {
		return nil, 422, fmt.Sprintf("%s must be an object", key)
	}
	return fields, 0, ""
}

// strField is an optional string field of a request: present, null, and
// its value; ok is false when the field is present with another JSON type.
type strField struct {
	present, null bool
	val           string
}

func getString(fields map[string]json.RawMessage, key string) (f strField, ok bool) {
	raw, present := fields[key]
	if !present {
		return f, true
	}
	f.present = true
	if string(bytes.TrimSpace(raw)) == "null" {
		f.null = true
		return f, true
	}
	if err := json.Unmarshal(raw, &f.val); err != nil {
		return f, false
	}
	return f, true
}

// scorecardFields are the five scorecard fields; nil means absent.
type scorecardFields struct {
	Description, StartDate, EndDate, CharterID, Province *string
}

// checkScorecardFields returns a message per missing or invalid field among
// those present (all five for a create).
func checkScorecardFields(f scorecardFields) []string {
	var out []string
	blank := func(p *string) bool { return p != nil && strings.TrimSpace(*p) == "" }
	if blank(f.Description) {
		out = append(out, "description can't be blank")
	}
	var start, end civilDate
	for _, d := range []struct {
		name string
		v    *string
		into *civilDate
	}{{"start_date", f.StartDate, &start}, {"end_date", f.EndDate, &end}} {
		switch {
		case d.v == nil:
		case blank(d.v):
			out = append(out, d.name+" can't be blank")
		default:
			v, ok := parseCivilDate(*d.v)
			if !ok {
				out = append(out, fmt.Sprintf("%s %q is not a valid date (YYYY-MM-DD)", d.name, *d.v))
				continue
			}
			*d.into = v
		}
	}
	if !start.isZero() && !end.isZero() && end.before(start) {
		out = append(out, fmt.Sprintf("end_date %s must not be before start_date %s", end, start))
	}
	switch {
	case f.CharterID == nil:
	case blank(f.CharterID):
		out = append(out, "charter_id can't be blank")
	case !slices.Contains(charters, *f.CharterID):
		out = append(out, fmt.Sprintf("charter_id %q is not included in the list of charters", *f.CharterID))
	}
	switch {
	case f.Province == nil:
	case blank(f.Province):
		out = append(out, "province can't be blank")
	case !slices.Contains(provinces, *f.Province):
		out = append(out, fmt.Sprintf("province %q is not included in the list of provinces", *f.Province))
	}
	return out
}
