package savedset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"io"
	"strconv"
	"strings"
	"time"
)

// SavedSetSchema names the shape of a saved change set. Version 1 sets
// carried a plain SHA-256 anyone could recompute; they are refused.
const SavedSetSchema = "eepipe.changeset/v2"

// SavedChangeSet is a change set written by `eepipe diff -o` and applied
// by `eepipe apply FILE`: for every counter and field to write, the
// service value it was computed against, with the input files' hashes, the
// accounts and the key pairs it is bound to. Signature is the HMAC-SHA256
// of the rest under the accounts' keys (SetKey; docs/apply-and-state.md, "Saved change
// sets").
type SavedChangeSet struct {
	Schema   string               `json:"schema"`
	Created  time.Time            `json:"created"`
	Service  string               `json:"service"`
	Files    []pipeline.InputFile `json:"files"`
	Accounts []string             `json:"accounts"`
	Keys     []SavedKey           `json:"keys"`
	// SignedOff is a person's sign-off (SignOff), when the set has one.
	SignedOff *SavedSignOff `json:"sign_off,omitempty"`
	Plans     []SavedPlan   `json:"plans"`
	Signature string        `json:"signature"`

	digest []byte // the content digest, computed as the set was read
}

// SavedPlan is one plan of a saved change set: an update of a stored plan,
// or a plan to create.
type SavedPlan struct {
	Account string        `json:"account"`
	Action  diff.Action   `json:"action"`
	PlanID  int64         `json:"plan_id,omitempty"` // the stored plan (update)
	Title   string        `json:"title"`
	Create  *SavedNewPlan `json:"create,omitempty"`
	Fields  []SavedField  `json:"fields,omitempty"`
	Targets []SavedTarget `json:"targets,omitempty"`
}

// SavedNewPlan is the create request of a plan to create.
type SavedNewPlan struct {
	Name        string        `json:"name"`
	StartDate   pipeline.Date `json:"start_date"`
	EndDate     pipeline.Date `json:"end_date"`
	ScorecardID string        `json:"scorecard_id,omitempty"`
	Sector      string        `json:"sector,omitempty"`
}

// SavedField is one metadata field to write and the service value it was
// computed against.
type SavedField struct {
	Field    string `json:"field"`
	Expected string `json:"expected"`
	New      string `json:"new"`
	// File and Cell are where the new value was read (the flat row's
	// column, the grid's labelled cell).
	File string `json:"file,omitempty"`
	Cell string `json:"cell,omitempty"`
}

// SavedTarget is one target with the counters to write.
type SavedTarget struct {
	YearNumber    int            `json:"year_number"`
	FinancialYear string         `json:"financial_year,omitempty"`
	TargetType    string         `json:"target_type"`
	MilestoneID   int64          `json:"milestone_id,omitempty"`
	TargetID      int64          `json:"target_id,omitempty"`
	File          string         `json:"file,omitempty"`
	Counters      []SavedCounter `json:"counters"`
}

// SavedCounter is one counter to write: the service value it was computed
// against (nil: unknown, a prefilled new plan) and the value to write.
type SavedCounter struct {
	Counter  string `json:"counter"`
	Expected *int64 `json:"expected"`
	New      int64  `json:"new"`
	Cell     string `json:"cell,omitempty"`
}

// SaveChangeSet turns the plans of cs that change something into a
// SavedChangeSet signed with the keys of its accounts. Failed plans,
// recreates and values a set may not hold cannot be saved: the error names
// them.
func SaveChangeSet(cs *diff.ChangeSet, service string, files []pipeline.InputFile, created time.Time, cat *pipeline.Catalog, keys SetKeys) (*SavedChangeSet, error) {
	s := &SavedChangeSet{Schema: SavedSetSchema, Created: created.UTC(), Service: service, Files: files}
	var problems []string
	seen := map[string]bool{}
	for _, d := range cs.Plans {
		switch d.Action {
		case diff.ActionUnchanged:
			continue
		case diff.ActionFailed:
			problems = append(problems, fmt.Sprintf("%s cannot be applied: %s", d.Title(), d.Reason))
			continue
		case diff.ActionRecreate:
			problems = append(problems, fmt.Sprintf("%s would be recreated; a saved change set cannot recreate plans: apply the workbook", d.Title()))
			continue
		}
		sp := SavedPlan{Account: d.Account, Action: d.Action, PlanID: d.PlanID(), Title: d.Title()}
		if d.Action == diff.ActionCreate {
			sp.PlanID = 0
			sp.Create = &SavedNewPlan{Name: d.Create.Name, StartDate: d.Create.StartDate, EndDate: d.Create.EndDate,
				ScorecardID: d.Create.ScorecardID, Sector: d.Create.Sector}
		} else {
			for _, f := range d.Fields {
				sp.Fields = append(sp.Fields, SavedField{Field: f.Field, Expected: f.Old, New: f.New, File: f.Origin.File, Cell: f.Origin.Ref()})
			}
		}
		for i := range d.Targets {
			t := &d.Targets[i]
			if len(t.Changes) == 0 {
				continue
			}
			st := SavedTarget{YearNumber: t.YearNumber, TargetType: t.TargetType, MilestoneID: t.MilestoneID, TargetID: t.TargetID}
			if t.FinancialYear != 0 {
				st.FinancialYear = t.FinancialYear.String()
			}
			if t.Input != nil {
				st.File = t.Input.Origin.File
			}
			for _, c := range t.Changes {
				sc := SavedCounter{Counter: c.Name, New: c.New, Cell: c.Origin.Ref()}
				if c.OldKnown {
					sc.Expected = diff.Ptr(c.Old)
				}
				st.Counters = append(st.Counters, sc)
			}
			sp.Targets = append(sp.Targets, st)
		}
		if !seen[d.Account] {
			seen[d.Account] = true
			s.Accounts = append(s.Accounts, d.Account)
		}
		s.Plans = append(s.Plans, sp)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the change set cannot be saved: %s", strings.Join(problems, "; "))
	}
	if err := s.Sign(keys); err != nil {
		return nil, fmt.Errorf("the change set cannot be signed: %w", err)
	}
	if err := s.check(cat); err != nil {
		var se *SavedSetError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("the change set cannot be saved: %s", strings.Join(se.Problems, "; "))
		}
		return nil, err
	}
	return s, nil
}

// EncodeSaved writes s as indented JSON, one plan at a time.
func EncodeSaved(w io.Writer, s *SavedChangeSet) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	h := s.header()
	head, err := json.MarshalIndent(struct {
		Schema   string               `json:"schema"`
		Created  time.Time            `json:"created"`
		Service  string               `json:"service"`
		Files    []pipeline.InputFile `json:"files"`
		Accounts []string             `json:"accounts"`
		Keys     []SavedKey           `json:"keys"`
		// The sign-off comes before the plans, so that a sign-off
		// workbook's readable sheet shows it above them.
		SignedOff *SavedSignOff `json:"sign_off,omitempty"`
	}{h.Schema, s.Created, h.Service, h.Files, h.Accounts, h.Keys, s.SignedOff}, "", "  ")
	if err != nil {
		return err
	}
	bw.Write(head[:len(head)-2]) // without "\n}"
	bw.WriteString(",\n  \"plans\": [")
	for i := range s.Plans {
		b, err := json.MarshalIndent(&s.Plans[i], "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
	}
	if len(s.Plans) > 0 {
		bw.WriteString("\n  ")
	}
	sig, _ := json.Marshal(s.Signature)
	fmt.Fprintf(bw, "],\n  \"signature\": %s\n}\n", sig)
	return bw.Flush()
}

// MarshalSaved writes s as indented JSON.
func MarshalSaved(s *SavedChangeSet) ([]byte, error) {
	var b bytes.Buffer
	err := EncodeSaved(&b, s)
	return b.Bytes(), err
}

// ErrNotChangeSet is returned by ScanSaved for JSON that is not a change set.
var ErrNotChangeSet = errors.New("not an eepipe change set")

// ScanSaved reads a saved change set from r, checking its shape (Check
// validates its values and Verify its signature), and hands each plan to
// fn as it is read, with the header read so far and the plan's digest,
// and keeps none: the set it returns has no plans. The
// service, accounts and keys come before the plans, as EncodeSaved writes
// them.
func ScanSaved(r io.Reader, fn func(h *SavedChangeSet, i int, p *SavedPlan, digest [sha256.Size]byte) error) (*SavedChangeSet, error) {
	// Whitespace is collapsed before the decoder, which would otherwise
	// hold a value's padding whole: memory bounded by the plans, not by
	// what separates them (docs/apply-and-state.md, "Memory").
	dec := json.NewDecoder(&spaceCollapser{r: bufio.NewReaderSize(r, 1<<16)})
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, ErrNotChangeSet
	}
	damaged := func(err error) error { return fmt.Errorf("the change set is damaged: %v", err) }
	// The schema comes first, as diff -o writes it: anything else is not a
	// change set.
	if tok, err := dec.Token(); err != nil || tok != "schema" {
		return nil, ErrNotChangeSet
	}
	var s SavedChangeSet
	if err := dec.Decode(&s.Schema); err != nil || !strings.HasPrefix(s.Schema, "eepipe.changeset/") {
		return nil, ErrNotChangeSet
	}
	switch s.Schema {
	case SavedSetSchema:
	case "eepipe.changeset/v1":
		return nil, &SavedSetError{Problems: []string{"it was written by an older eepipe that signed change sets with a plain SHA-256, " +
			"which anyone can recompute after editing the set; such sets are no longer applied"}}
	default:
		return nil, fmt.Errorf("change set schema %q is not %q: it was written by another eepipe version", s.Schema, SavedSetSchema)
	}
	d := newSetDigest()
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, damaged(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, damaged(fmt.Errorf("%q appears twice", key))
		}
		seen[key] = true
		switch key {
		case "created":
			err = dec.Decode(&s.Created)
		case "service":
			err = dec.Decode(&s.Service)
		case "files":
			err = dec.Decode(&s.Files)
		case "accounts":
			err = dec.Decode(&s.Accounts)
		case "keys":
			err = dec.Decode(&s.Keys)
		case "signature":
			err = dec.Decode(&s.Signature)
		case "sign_off":
			if seen["plans"] {
				err = fmt.Errorf("%q comes after \"plans\"", key)
			} else {
				s.SignedOff = new(SavedSignOff)
				err = dec.Decode(s.SignedOff)
			}
		case "plans":
			for _, k := range []string{"service", "accounts", "keys"} {
				if !seen[k] && err == nil {
					err = fmt.Errorf("%q comes before %q", key, k)
				}
			}
			if err == nil {
				err = decodeSavedPlans(dec, &s, d, fn)
			}
		default:
			err = fmt.Errorf("unknown field %q", key)
		}
		if stop := (*scanStop)(nil); errors.As(err, &stop) {
			return nil, stop.err
		}
		if err != nil {
			return nil, damaged(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, damaged(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, damaged(errors.New("data follows the change set"))
	}
	for _, k := range []string{"created", "service", "accounts", "keys", "plans", "signature"} {
		if !seen[k] {
			return nil, damaged(fmt.Errorf("%q is missing", k))
		}
	}
	if s.Signature == "" {
		return nil, &SavedSetError{Problems: []string{"it carries no signature"}, err: ErrSetSignature}
	}
	var err error
	if s.digest, err = d.sum(s.header()); err != nil {
		return nil, damaged(err)
	}
	return &s, nil
}

// spaceCollapser reads JSON from r with each run of whitespace outside
// its strings cut to the run's first byte. JSON reads any run of
// whitespace as one, so what it decodes, and what it refuses, is what r
// holds; only the decoder's buffer no longer grows with the padding.
type spaceCollapser struct {
	r io.Reader
	// inString and escaped are the position in a string; space, that the
	// byte before was whitespace outside one.
	inString, escaped, space bool
}

// Read implements io.Reader.
func (c *spaceCollapser) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		w := 0
		for _, b := range p[:n] {
			switch {
			case c.inString:
				switch {
				case c.escaped:
					c.escaped = false
				case b == '\\':
					c.escaped = true
				case b == '"':
					c.inString = false
				}
			case b == ' ' || b == '\t' || b == '\n' || b == '\r':
				if c.space {
					continue
				}
				c.space = true
			default:
				c.space = false
				c.inString = b == '"'
			}
			p[w] = b
			w++
		}
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}

// decodeSavedPlans reads the plans array, one plan at a time, into the
// digest and fn.
func decodeSavedPlans(dec *json.Decoder, s *SavedChangeSet, d *setDigest, fn func(*SavedChangeSet, int, *SavedPlan, [sha256.Size]byte) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return errors.New("plans is not a list")
	}
	for i := 0; dec.More(); i++ {
		p := new(SavedPlan)
		if err := dec.Decode(p); err != nil {
			return err
		}
		sum, err := d.plan(p)
		if err != nil {
			return err
		}
		if err := fn(s, i, p, sum); err != nil {
			return &scanStop{err}
		}
	}
	_, err = dec.Token()
	return err
}

// scanStop carries the error of ScanSaved's fn out of the decoding, as it
// is: it does not say the set is damaged.
type scanStop struct{ err error }

func (e *scanStop) Error() string { return e.err.Error() }

// savedOrigin reads back the location a change set stores as text (file,
// and Origin.Ref: "Targets!F12", "Targets row 12", "sheet Targets", "line
// 12, column 6", "line 12"), so that messages name the cell as they do
// for a workbook. Text it does not recognise is kept as the sheet's name:
// the message still shows it.
func SavedOrigin(file, ref string) pipeline.Origin {
	o := pipeline.Origin{File: file}
	if ref == "" {
		return o
	}
	if i := strings.LastIndex(ref, "!"); i > 0 {
		if col, row, ok := parseA1(ref[i+1:]); ok {
			o.Sheet, o.Cell, o.Row, o.Column = ref[:i], ref[i+1:], row, col
			return o
		}
	}
	if i := strings.LastIndex(ref, " row "); i > 0 {
		if n, err := strconv.Atoi(ref[i+len(" row "):]); err == nil && n > 0 {
			o.Sheet, o.Row = ref[:i], n
			return o
		}
	}
	var row, col int
	var rest string
	if n, _ := fmt.Sscanf(ref, "line %d, column %d%s", &row, &col, &rest); n == 2 && row > 0 && col > 0 && ref == fmt.Sprintf("line %d, column %d", row, col) {
		o.Row, o.Column = row, col
		return o
	}
	if n, _ := fmt.Sscanf(ref, "line %d%s", &row, &rest); n == 1 && row > 0 && ref == fmt.Sprintf("line %d", row) {
		o.Row = row
		return o
	}
	o.Sheet = strings.TrimPrefix(ref, "sheet ")
	return o
}

// parseA1 reads an A1-style cell reference ("F12"): its 1-based column
// and row.
func parseA1(ref string) (col, row int, ok bool) {
	i := 0
	for i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z' {
		if col > 1<<20 {
			return 0, 0, false
		}
		col = col*26 + int(ref[i]-'A'+1)
		i++
	}
	if i == 0 || i > 3 || i == len(ref) || ref[i] == '0' {
		return 0, 0, false
	}
	row, err := strconv.Atoi(ref[i:])
	if err != nil || row <= 0 || strings.ContainsAny(ref[i:], "+-") {
		return 0, 0, false
	}
	return col, row, true
}

// parseFinancialYearText reads "2026/27".
func ParseFinancialYearText(s string) (pipeline.FinancialYear, error) {
	var y, n int
	if _, err := fmt.Sscanf(s, "%d/%d", &y, &n); err != nil || (y+1)%100 != n {
		return 0, fmt.Errorf("financial year %q is not like 2026/27", s)
	}
	return pipeline.FinancialYear(y), nil
}
