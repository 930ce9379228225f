package statestore

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// The packed columns (schema version 7): a target write's counters are
// one column of its row, and the last values applied to a target under an
// account one row, both JSON naming each counter by its id in
// eepipe_counter_names (names.go) (docs/apply-and-state.md, "The state
// store"):
//
//   - eepipe_writes.counters: [[counter id, before or null, after, sent
//     0/1], ...] in the order of the write's counters, a counter not sent
//     whose value before is its value after as [counter id, value] (the
//     counters a run found in sync, most of what a first apply records);
//   - eepipe_last_values.counters: {"counter id": [value, write id], ...},
//     the write being the one that applied the value (its run, time and
//     file are the last value's); a value carried over from an older store
//     whose write was not found is [value, 0, run, at, file].
//
// JSON lets each backend merge a target's last values in the statement
// that records them (SQLite json_patch, PostgreSQL jsonb ||), without
// reading them first.

// packWriteCounters returns the counters column of a write.
func packWriteCounters(cs []pipeline.CounterWrite, ids map[string]int64) string {
	// Built in place (strings.Builder: no copy at the end), as packLast: a
	// first apply packs millions of counters.
	var b strings.Builder
	b.Grow(2 + len(cs)*12)
	var num [20]byte
	b.WriteByte('[')
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		b.Write(strconv.AppendInt(num[:0], ids[c.Counter], 10))
		b.WriteByte(',')
		if !c.Sent && c.Before != nil && *c.Before == c.After {
			b.Write(strconv.AppendInt(num[:0], c.After, 10))
			b.WriteByte(']')
			continue
		}
		if c.Before != nil {
			b.Write(strconv.AppendInt(num[:0], *c.Before, 10))
		} else {
			b.WriteString("null")
		}
		b.WriteByte(',')
		b.Write(strconv.AppendInt(num[:0], c.After, 10))
		if c.Sent {
			b.WriteString(",1]")
		} else {
			b.WriteString(",0]")
		}
	}
	b.WriteByte(']')
	return b.String()
}

// counterNeedle is what the counters column of a write holds when the
// write has the counter of this id: its entry's start (no other bracket
// is followed by a number).
func counterNeedle(id int64) string {
	return "[" + strconv.FormatInt(id, 10) + ","
}

// packLast returns the last values column of write id's counters (those
// it applied).
func packLast(cs []pipeline.CounterWrite, ids map[string]int64, id int64) string {
	var b strings.Builder
	b.Grow(2 + len(cs)*24) // "12":[345,1234567], and room for more digits
	var num [20]byte
	write := strconv.AppendInt(make([]byte, 0, 22), id, 10)
	write = append(write, ']')
	b.WriteByte('{')
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.Write(strconv.AppendInt(num[:0], ids[c.Counter], 10))
		b.WriteString(`":[`)
		b.Write(strconv.AppendInt(num[:0], c.After, 10))
		b.WriteByte(',')
		b.Write(write)
	}
	b.WriteByte('}')
	return b.String()
}

// errPacked is the error of a packed column that does not read.
var errPacked = errors.New("a packed counters column does not read")

// scanner reads the packed columns (as SQLite and PostgreSQL give them
// back: with or without spaces).
type scanner struct {
	s   []byte
	i   int
	err error
}

func (p *scanner) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

// peek returns the next character after spaces (0 at the end).
func (p *scanner) peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// eat reads c, when it is next.
func (p *scanner) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *scanner) want(c byte) {
	if !p.eat(c) && p.err == nil {
		p.err = errPacked
	}
}

// str reads a JSON string.
func (p *scanner) str() string {
	if p.peek() != '"' {
		p.err = errPacked
		return ""
	}
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.s) && p.s[p.i] != '"' {
		if p.s[p.i] == '\\' {
			escaped = true
			p.i++
		}
		p.i++
	}
	if p.i >= len(p.s) {
		p.err = errPacked
		return ""
	}
	p.i++
	raw := p.s[start:p.i]
	if escaped {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			p.err = errPacked
		}
		return v
	}
	return string(raw[1 : len(raw)-1])
}

// num reads an integer, or null (ok false).
func (p *scanner) num() (v int64, ok bool) {
	p.ws()
	if p.i+4 <= len(p.s) && string(p.s[p.i:p.i+4]) == "null" {
		p.i += 4
		return 0, false
	}
	start := p.i
	neg := p.i < len(p.s) && p.s[p.i] == '-'
	if neg {
		p.i++
	}
	var u uint64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		u = u*10 + uint64(p.s[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if neg {
		digits--
	}
	if digits == 0 || digits > 18 {
		// None, or maybe beyond 64 bits: the careful parse.
		v, err := strconv.ParseInt(string(p.s[start:p.i]), 10, 64)
		if err != nil && p.err == nil {
			p.err = errPacked
		}
		return v, true
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// val reads an integer that may not be null.
func (p *scanner) val() int64 {
	v, ok := p.num()
	if !ok && p.err == nil {
		p.err = errPacked
	}
	return v
}

// key reads an object key that is a counter id ("17").
func (p *scanner) key() int64 {
	if !p.eat('"') {
		p.err = errPacked
		return 0
	}
	id := p.val()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		p.err = errPacked
		return 0
	}
	p.i++
	return id
}

// unpackWriteCounters reads the counters column of a write, naming the
// counters with name.
func unpackWriteCounters(col []byte, name func(int64) (string, error)) ([]pipeline.CounterWrite, error) {
	p := &scanner{s: col}
	var out []pipeline.CounterWrite
	p.want('[')
	for p.err == nil && !p.eat(']') {
		if len(out) > 0 {
			p.want(',')
		}
		var c pipeline.CounterWrite
		p.want('[')
		id := p.val()
		p.want(',')
		before, known := p.num()
		if p.eat(']') { // [id, value]: in sync, not sent
			if !known && p.err == nil {
				p.err = errPacked
			}
			c.Before, c.After = &before, before
		} else {
			if known {
				c.Before = &before
			}
			p.want(',')
			c.After = p.val()
			p.want(',')
			sent := p.val()
			c.Sent = sent != 0
			p.want(']')
		}
		if p.err != nil {
			break
		}
		var err error
		if c.Counter, err = name(id); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, p.err
}

// lastEntry is one counter of a last values column.
type lastEntry struct {
	value, write int64
	// Carried over from an older store whose write was not found (write
	// 0): the run, time and file of the value.
	run      int64
	at, file string
}

// eachLast calls fn for each counter of a last values column, naming
// the counters with name.
func eachLast(col []byte, name func(int64) (string, error), fn func(name string, e lastEntry)) error {
	p := &scanner{s: col}
	p.want('{')
	first := true
	for p.err == nil {
		// The compact form's '}' and ',' first (compactLast).
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			break
		}
		if p.eat('}') {
			break
		}
		if !first {
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			} else {
				p.want(',')
			}
		}
		first = false
		if p.err != nil {
			break
		}
		if id, e, ok := p.compactLast(); ok {
			n, err := name(id)
			if err != nil {
				return err
			}
			fn(n, e)
			continue
		}
		id, e := p.lastItem()
		if p.err != nil {
			break
		}
		n, err := name(id)
		if err != nil {
			return err
		}
		fn(n, e)
	}
	return p.err
}

// lastItem reads one entry of a last values column in any form it may
// take ("id": [value, write] or [value, 0, run, at, file]), with spaces;
// a damaged one sets p.err.
func (p *scanner) lastItem() (int64, lastEntry) {
	id := p.key()
	p.want(':')
	p.want('[')
	var e lastEntry
	e.value = p.val()
	p.want(',')
	e.write = p.val()
	if p.eat(',') {
		e.run = p.val()
		p.want(',')
		e.at = p.str()
		p.want(',')
		e.file = p.str()
	}
	p.want(']')
	return id, e
}

// compactLast reads the entry of a last values column at p.i when it is
// in the form packLast writes it, "id":[value,write] with no space: the
// form of every entry SQLite gives back, read here without the general
// reading's steps (a re-apply reads millions). Any other entry (spaces,
// as PostgreSQL gives it; a value carried over; more digits than 18;
// damage) it leaves unread (ok false) to the general reading, which reads
// or refuses it; what it reads, the general reading reads the same.
func (p *scanner) compactLast() (id int64, e lastEntry, ok bool) {
	s, i := p.s, p.i
	if i >= len(s) || s[i] != '"' {
		return 0, e, false
	}
	if id, i, ok = compactInt(s, i+1); !ok || i+2 >= len(s) || s[i] != '"' || s[i+1] != ':' || s[i+2] != '[' {
		return 0, e, false
	}
	if e.value, i, ok = compactInt(s, i+3); !ok || i >= len(s) || s[i] != ',' {
		return 0, e, false
	}
	if e.write, i, ok = compactInt(s, i+1); !ok || i >= len(s) || s[i] != ']' {
		return 0, e, false
	}
	p.i = i + 1
	return id, e, true
}

// compactInt reads the integer at s[i:] (a sign and 1 to 18 digits, as
// scanner.num reads them without its careful parse) and returns it with
// the index after it.
func compactInt(s []byte, i int) (int64, int, bool) {
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	start := i
	var u int64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i-start < 18 {
		u = u*10 + int64(s[i]-'0')
		i++
	}
	if i == start || i < len(s) && s[i] >= '0' && s[i] <= '9' {
		return 0, i, false
	}
	if neg {
		u = -u
	}
	return u, i, true
}

// packCarried returns a last values column of entries carried over from
// an older store (migration 7), by counter id, in order.
func packCarried(entries map[int64]lastEntry, order []int64) string {
	var b []byte
	b = append(b, '{')
	for i, id := range order {
		e := entries[id]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `":[`...)
		b = strconv.AppendInt(b, e.value, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, e.write, 10)
		if e.write == 0 {
			b = append(b, ',')
			b = strconv.AppendInt(b, e.run, 10)
			b = append(b, ',')
			b = appendString(b, e.at)
			b = append(b, ',')
			b = appendString(b, e.file)
		}
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
