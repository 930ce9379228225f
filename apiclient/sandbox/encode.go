package sandbox

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

// A plan's JSON is built once per change and kept: GET, list and the
// answers to writes send the kept bytes. The bytes are those encoding/json
// writes for apiclient.Plan and apiclient.Target (a test compares them),
// appended by hand: a target is one flat object whose keys are sorted (id,
// the counters by name, target_type), as json.Marshal writes a map.
//
// Kept slices are never changed in place: a change replaces them, so an
// answer being written keeps the bytes it took.

// timestamp formats a datetime as the service does (ISO 8601, UTC, ms).
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// appendString appends s as a JSON string, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendTo appends the target's JSON object.
func (t *target) appendTo(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, t.id, 10)
	for i, v := range t.counters {
		b = append(b, ',')
		b = append(b, served.keys[i]...)
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, `,"target_type":`...)
	b = appendString(b, t.targetType)
	return append(b, '}')
}

// targetSize estimates the length of a target's JSON object.
func targetSize() int { return 64 + len(served.names)*48 }

// encode returns the target's JSON object followed by a newline, the
// answer to a target update.
func (t *target) encode() []byte {
	return append(t.appendTo(make([]byte, 0, targetSize())), '\n')
}

// encoded returns the kept answer to a target update; the plan's mu is
// held.
func (t *target) encoded() []byte {
	if t.enc == nil {
		t.enc = t.encode()
	}
	return t.enc
}

// appendFields appends the plan's fields without milestones and without the
// closing brace.
func (p *plan) appendFields(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, p.id, 10)
	b = append(b, `,"name":`...)
	b = appendString(b, p.name)
	b = append(b, `,"start_date":"`...)
	b = append(b, p.start.String()...)
	b = append(b, `","end_date":"`...)
	b = append(b, p.end.String()...)
	b = append(b, `","scorecard_id":`...)
	b = appendOptString(b, p.scorecardID)
	b = append(b, `,"sector":`...)
	b = appendOptString(b, p.sector)
	b = append(b, `,"era":`...)
	b = appendString(b, p.era)
	b = append(b, `,"created_at":"`...)
	b = append(b, timestamp(p.created)...)
	b = append(b, `","updated_at":"`...)
	b = append(b, timestamp(p.updated)...)
	return append(b, '"')
}

// briefJSON returns the kept list form of the plan (no milestones, no
// newline); p.mu is held.
func (p *plan) briefJSON() []byte {
	if p.brief == nil {
		p.brief = append(p.appendFields(make([]byte, 0, 256)), '}')
	}
	return p.brief
}

// fullJSON returns the kept full form of the plan (with milestones and
// targets) followed by a newline; p.mu is held.
func (p *plan) fullJSON() []byte {
	if p.full != nil {
		return p.full
	}
	size := 512
	for _, m := range p.milestones {
		size += 128 + len(m.targets)*(targetSize()+1)
	}
	b := p.appendFields(make([]byte, 0, size))
	b = append(b, `,"milestones":[`...)
	for i, m := range p.milestones {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, m.id, 10)
		b = append(b, `,"year_number":`...)
		b = strconv.AppendInt(b, int64(m.yearNumber), 10)
		b = append(b, `,"start_date":"`...)
		b = append(b, m.start.String()...)
		b = append(b, `","end_date":"`...)
		b = append(b, m.end.String()...)
		b = append(b, `","targets":[`...)
		for j, t := range m.targets {
			if j > 0 {
				b = append(b, ',')
			}
			if t.enc != nil {
				b = append(b, t.enc[:len(t.enc)-1]...)
			} else {
				b = t.appendTo(b)
			}
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}\n"...)
	p.full = b
	return b
}

// changed drops the kept encodings of the plan after a change of its
// fields; p.mu is held.
func (p *plan) changed() { p.full, p.brief = nil, nil }

// wire returns the plan as apiclient.Plan (for Sandbox.Plans); p.mu is held.
func (p *plan) wire(withMilestones bool) apiclient.Plan {
	out := apiclient.Plan{
		ID: p.id, Name: p.name, StartDate: p.start.String(), EndDate: p.end.String(),
		ScorecardID: cloneStr(p.scorecardID), Sector: cloneStr(p.sector), Era: p.era,
		CreatedAt: timestamp(p.created), UpdatedAt: timestamp(p.updated),
	}
	if withMilestones {
		out.Milestones = make([]apiclient.Milestone, 0, len(p.milestones))
		for _, m := range p.milestones {
			wm := apiclient.Milestone{ID: m.id, YearNumber: m.yearNumber, StartDate: m.start.String(), EndDate: m.end.String()}
			for _, t := range m.targets {
				wm.Targets = append(wm.Targets, t.wire())
			}
			out.Milestones = append(out.Milestones, wm)
		}
	}
	return out
}

// wire returns the target as apiclient.Target; p.mu is held.
func (t *target) wire() apiclient.Target {
	c := make(map[string]int64, len(t.counters))
	for i, v := range t.counters {
		c[served.names[i]] = v
	}
	return apiclient.Target{ID: t.id, TargetType: t.targetType, Counters: c}
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
