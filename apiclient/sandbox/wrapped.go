package sandbox

import (
	"encoding/json"
	"unicode/utf8"
)

// plainWrapped is decodeWrapped's result for a plain body, found in one
// pass after json.Valid rather than by two encoding/json decodings into
// maps: both objects' keys without escapes or non-ASCII bytes (so that a
// key is its own bytes), the inner object present. ok is false for any
// other body, which decodeWrapped then decodes (and words the error of)
// as before. A repeated key keeps its last value, as a map decoding does;
// the values are the body's own bytes (json.RawMessage, not copied).
func plainWrapped(body []byte, key string) (fields map[string]json.RawMessage, ok bool) {
	if !json.Valid(body) {
		return nil, false
	}
	var inner []byte
	if !eachPlainField(body, func(k, v []byte) {
		if string(k) == key {
			inner = v
		}
	}) || inner == nil || string(inner) == "null" {
		return nil, false
	}
	fields = map[string]json.RawMessage{}
	if !eachPlainField(inner, func(k, v []byte) { fields[string(k)] = v }) {
		return nil, false
	}
	return fields, true
}

// eachPlainField calls f with each key (without its quotes) and value of
// the object b (valid JSON) and reports true, or false when b is not an
// object or has a key with an escape or a non-ASCII byte.
func eachPlainField(b []byte, f func(k, v []byte)) bool {
	i := jsonSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = jsonSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) && b[i] == '"' {
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' || b[end] >= utf8.RuneSelf {
				return false
			}
			end++
		}
		k := b[i+1 : end]
		i = jsonSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonSpace(b, i+1)
		vEnd := jsonValueEnd(b, i)
		f(k, b[i:vEnd])
		i = jsonSpace(b, vEnd)
		if i < len(b) && b[i] == '}' {
			return true
		}
		if i >= len(b) || b[i] != ',' {
			return false
		}
		i = jsonSpace(b, i+1)
	}
	return false
}

func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the end of the value at b[i] of valid JSON.
func jsonValueEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i
		}
	}
	return i
}
