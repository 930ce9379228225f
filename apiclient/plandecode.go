package apiclient

import (
	"bytes"
	"unicode/utf8"
)

// A plan with its milestones is the largest answer the client decodes (a
// create's answer: five years of two targets of about 90 counters each),
// and encoding/json read it three times: it checks the document, walks it
// by reflection, and scans each target once more to hand it to
// validTarget. decodeFast reads a checked document in one more pass
// without reflection, for the plain documents the service sends: keys
// without escapes, strings without escapes, integers, each field once.
// Anything else is declined and left to encoding/json, which also words
// the errors, so the result is always encoding/json's.

// fastDecoder is an answer that decodes a plain document (json.Valid
// accepted it) without encoding/json, or declines with false, its state
// then undefined (the caller decodes it afresh with encoding/json).
type fastDecoder interface {
	decodeFast(b []byte) bool
}

var _ fastDecoder = (*planDoc)(nil)

// decodeFast decodes a plan document: the fields of Plan, milestones with
// their fields, targets by Target.decodeFlat. Keys that are no field of
// Plan are skipped, as encoding/json skips them; a key that differs from
// a field's only in case (which encoding/json would match) is declined.
func (d *planDoc) decodeFast(b []byte) bool {
	if !d.decodePlain(b) {
		*d = planDoc{} // as the caller gave it: encoding/json decodes afresh
		return false
	}
	return true
}

// decodePlain is decodeFast, leaving d in any state when it declines.
func (d *planDoc) decodePlain(b []byte) bool {
	*d = planDoc{}
	p := &d.Plan
	var seen fieldSet
	i, ok := eachField(b, skipSpace(b, 0), func(key []byte, i int) (int, bool) {
		switch string(key) {
		case "id":
			return value(b, i, seen.once(0), func(v []byte) bool { return intValue(v, &p.ID) })
		case "name":
			return value(b, i, seen.once(1), func(v []byte) bool { return stringValue(v, &p.Name) })
		case "start_date":
			return value(b, i, seen.once(2), func(v []byte) bool { return stringValue(v, &p.StartDate) })
		case "end_date":
			return value(b, i, seen.once(3), func(v []byte) bool { return stringValue(v, &p.EndDate) })
		case "scorecard_id":
			return value(b, i, seen.once(4), func(v []byte) bool { return nullableString(v, &p.ScorecardID) })
		case "sector":
			return value(b, i, seen.once(5), func(v []byte) bool { return nullableString(v, &p.Sector) })
		case "era":
			return value(b, i, seen.once(6), func(v []byte) bool { return stringValue(v, &p.Era) })
		case "created_at":
			return value(b, i, seen.once(7), func(v []byte) bool { return stringValue(v, &p.CreatedAt) })
		case "updated_at":
			return value(b, i, seen.once(8), func(v []byte) bool { return stringValue(v, &p.UpdatedAt) })
		case "milestones":
			if !seen.once(9) {
				return i, false
			}
			return d.decodeMilestones(b, i)
		}
		return value(b, i, !foldsTo(key, planKeys), nil)
	})
	return ok && skipSpace(b, i) == len(b)
}

var planKeys = []string{"id", "name", "start_date", "end_date", "scorecard_id", "sector", "era", "created_at", "updated_at", "milestones"}

var milestoneKeys = []string{"id", "year_number", "start_date", "end_date", "targets"}

// decodeMilestones decodes the milestones array at b[i] (null: none) and
// returns the index after it.
func (d *planDoc) decodeMilestones(b []byte, i int) (int, bool) {
	if isNull(b, i) {
		return i + 4, true
	}
	d.Milestones = make([]milestoneDoc, 0, 5)
	return eachElement(b, i, func(i int) (int, bool) {
		var m milestoneDoc
		var seen fieldSet
		end, ok := eachField(b, i, func(key []byte, i int) (int, bool) {
			switch string(key) {
			case "id":
				return value(b, i, seen.once(0), func(v []byte) bool { return intValue(v, &m.ID) })
			case "year_number":
				return value(b, i, seen.once(1), func(v []byte) bool {
					n, ok := plainInt(v)
					m.YearNumber = int(n)
					return ok && int64(int(n)) == n
				})
			case "start_date":
				return value(b, i, seen.once(2), func(v []byte) bool { return stringValue(v, &m.StartDate) })
			case "end_date":
				return value(b, i, seen.once(3), func(v []byte) bool { return stringValue(v, &m.EndDate) })
			case "targets":
				if !seen.once(4) {
					return i, false
				}
				return m.decodeTargets(b, i)
			}
			return value(b, i, !foldsTo(key, milestoneKeys), nil)
		})
		d.Milestones = append(d.Milestones, m)
		return end, ok
	})
}

// decodeTargets decodes the targets array at b[i] (null: none) and
// returns the index after it.
func (m *milestoneDoc) decodeTargets(b []byte, i int) (int, bool) {
	if isNull(b, i) {
		return i + 4, true
	}
	m.Targets = make([]validTarget, 0, 2)
	return eachElement(b, i, func(i int) (int, bool) {
		var t Target
		end, ok := t.decodeFlatAt(b, i)
		m.Targets = append(m.Targets, validTarget(t))
		return end, ok
	})
}

// value skips the value at b[i] and returns the index after it, when ok;
// read, when not nil, reads the value and may decline it.
func value(b []byte, i int, ok bool, read func(v []byte) bool) (int, bool) {
	if !ok {
		return i, false
	}
	end := skipValue(b, i)
	if end < 0 || (read != nil && !read(b[i:end])) {
		return i, false
	}
	return end, true
}

// isNull reports whether the value at b[i] is null.
func isNull(b []byte, i int) bool {
	return len(b)-i >= 4 && string(b[i:i+4]) == "null"
}

// fieldSet tells which fields a document gave (at most 64).
type fieldSet uint64

// once marks field i given and reports whether it was the first time.
func (s *fieldSet) once(i int) bool {
	bit := fieldSet(1) << i
	if *s&bit != 0 {
		return false
	}
	*s |= bit
	return true
}

// eachField calls f with each key (without its quotes) of the object at
// b[i], in order, and the index of its value; f returns the index after
// the value. eachField returns the index after the object. It reports
// false for anything but an object of keys without escapes or non-ASCII
// bytes, or when f does.
func eachField(b []byte, i int, f func(key []byte, i int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' || b[end] >= utf8.RuneSelf {
				return i, false
			}
			end++
		}
		key := b[i+1 : end]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		vEnd, ok := f(key, skipSpace(b, i+1))
		if !ok {
			return i, false
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) {
			return i, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = skipSpace(b, i+1)
	}
}

// eachElement calls f with the index of each element of the array at
// b[i], in order; f returns the index after the element. eachElement
// returns the index after the array, or false when there is no array
// there or f declines.
func eachElement(b []byte, i int, f func(i int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := f(i)
		if !ok {
			return i, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return i, false
		}
		if b[i] == ']' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = skipSpace(b, i+1)
	}
}

// intValue sets *n from a plain integer that fits int64.
func intValue(v []byte, n *int64) bool {
	x, ok := plainInt(v)
	if ok {
		*n = x
	}
	return ok
}

// stringValue sets *s from a string without escapes whose bytes are
// valid UTF-8 (encoding/json replaces invalid bytes; declined here).
func stringValue(v []byte, s *string) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	in := v[1 : len(v)-1]
	if bytes.IndexByte(in, '\\') >= 0 || !utf8.Valid(in) {
		return false
	}
	*s = string(in)
	return true
}

// nullableString sets *s to nil for null, else to the string.
func nullableString(v []byte, s **string) bool {
	if string(v) == "null" {
		*s = nil
		return true
	}
	var x string
	if !stringValue(v, &x) {
		return false
	}
	*s = &x
	return true
}

// foldsTo reports whether key matches one of names in encoding/json's
// case-insensitive way (keys here are ASCII).
func foldsTo(key []byte, names []string) bool {
	for _, n := range names {
		if len(n) == len(key) && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}
