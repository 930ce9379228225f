package pipeline

import (
	"hash/maphash"
	"sort"
	"strings"
)

// ProblemBound bounds the problems a run keeps in memory. A workbook can
// carry hundreds of thousands of problems of one kind (a disabled column
// above the all-employees one on every row); the first Keep of each kind
// of each file are kept, with their cells, and the rest are counted by
// kind and handed to Overflow (the --report writer), so the full list
// still reaches the report without being held. Identical problems (a grid
// workbook repeats its plan cells in every grid, one after the other)
// count once.
//
// The zero ProblemBound, or one with Keep 0, keeps everything.
type ProblemBound struct {
	Keep     int           // problems kept per kind and file; 0 keeps all
	Overflow func(Problem) // receives every problem not kept, once; may be nil

	seed  maphash.Seed
	kinds map[boundKey]*boundKind
	order []boundKey
}

type boundKind struct {
	Omitted
	last uint64 // the hash of the kind's last problem, to count a repeat once
}

type boundKey struct {
	file string
	sev  Severity
	kind string
}

// Enabled reports whether the bound drops anything.
func (b *ProblemBound) Enabled() bool { return b != nil && b.Keep > 0 }

// Admit passes new problems through the bound and returns those kept,
// reusing ps's array.
func (b *ProblemBound) Admit(ps Problems) Problems {
	if !b.Enabled() {
		return ps
	}
	if b.kinds == nil {
		b.seed = maphash.MakeSeed()
		b.kinds = map[boundKey]*boundKind{}
	}
	out := ps[:0]
	for _, p := range ps {
		kind, label := p.Kind, p.Kind
		if kind == "" {
			kind = problemShape(p.Message)
		}
		k := boundKey{p.Origin.File, p.Severity, kind}
		o := b.kinds[k]
		if o == nil {
			if label == "" {
				label = problemLabel(p.Message)
			}
			o = &boundKind{Omitted: Omitted{Severity: p.Severity, File: p.Origin.File, Kind: label, Count: -b.Keep}}
			b.kinds[k] = o
			b.order = append(b.order, k)
		}
		h := b.hash(p)
		if h == o.last && o.Count > -b.Keep {
			continue
		}
		o.last = h
		o.Count++
		if o.Count <= 0 {
			out = append(out, p)
			continue
		}
		if b.Overflow != nil {
			b.Overflow(p)
		}
	}
	return out
}

func (b *ProblemBound) hash(p Problem) uint64 {
	var h maphash.Hash
	h.SetSeed(b.seed)
	h.WriteByte(byte(p.Severity))
	for _, s := range []string{p.Origin.File, p.Origin.Sheet, p.Origin.Cell, p.Origin.Header, p.Value, p.Message} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	var n [16]byte
	for i := range 8 {
		n[i] = byte(p.Origin.Row >> (8 * i))
		n[8+i] = byte(p.Origin.Column >> (8 * i))
	}
	h.Write(n[:])
	for _, s := range p.Suggestions {
		h.WriteString(s)
		h.WriteByte(1)
	}
	return h.Sum64()
}

// Omitted returns the kinds with problems set aside: errors first, then
// by file and in the order first seen.
func (b *ProblemBound) Omitted() []Omitted {
	if b == nil {
		return nil
	}
	var out []Omitted
	for _, k := range b.order {
		if o := b.kinds[k]; o.Count > 0 {
			out = append(out, o.Omitted)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Severity > out[j].Severity
	})
	return out
}

// problemShape is a message with its numbers and quoted values masked: the
// problems one format makes share it.
func problemShape(msg string) string {
	var b strings.Builder
	b.Grow(len(msg))
	quoted, digits := false, false
	for _, r := range msg {
		switch {
		case r == '"':
			if !quoted {
				b.WriteString(`"…"`)
			}
			quoted = !quoted
		case quoted:
		case r >= '0' && r <= '9':
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		default:
			b.WriteRune(r)
		}
		digits = false
	}
	return b.String()
}

// problemLabel names a kind by its first problem's message: the part
// before the advice after a semicolon.
func problemLabel(msg string) string {
	if i := strings.Index(msg, "; "); i > 0 {
		msg = msg[:i]
	}
	return msg
}
