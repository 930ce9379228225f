package assemble

import (
	"github.com/eepipe/eepipe/pipeline"
	"slices"
)

// Rejection is what apply --skip-invalid hands back instead of sending
// (docs/apply-and-state.md, "Skipping invalid plans"): every plan with an
// error, and the rows and grid sheets to write back, with their problems.
type Rejection struct {
	// Plans are the rejected plans, in input order.
	Plans []*pipeline.InputPlan
	// Rows are the table rows and grid sheets to hand back, by file and
	// sheet in input order, rows in order: the rejected plans' and every
	// row with an error that no plan holds.
	Rows []pipeline.RowRef
	// WholeFiles are the files rejected whole: an error there belongs to
	// no plan (a header, a file that cannot be read, a row whose plan key
	// is in error), so no plan of theirs is sent.
	WholeFiles []string
	// Problems are the problems of what is handed back (errors and
	// warnings), as read.
	Problems pipeline.Problems
}

// Empty reports whether nothing was rejected.
func (r *Rejection) Empty() bool {
	return len(r.Plans) == 0 && len(r.Rows) == 0 && len(r.WholeFiles) == 0
}

// SplitInvalid sets aside every plan of b with an error and returns the
// plans to send. An error is a plan's when it is on one of the plan's rows
// or grid sheets (every plan holding that row, when several do). An error
// that no plan holds rejects its file whole: a header's, a file's that
// cannot be read, a row's whose plan key (plan_id, plan_name, start_date)
// is in error, since that row may belong to any plan of the file; so does
// an error left out of b.Problems by its bound (b.Omitted). Warnings never
// reject a plan.
func SplitInvalid(b *pipeline.Batch) (send []*pipeline.InputPlan, rej Rejection) {
	byRow := map[pipeline.RowRef][]int{}
	for i, p := range b.Plans {
		for _, r := range p.Rows() {
			byRow[r] = append(byRow[r], i)
		}
	}
	rejected := make([]bool, len(b.Plans))
	whole := map[string]bool{}
	loose := map[pipeline.RowRef]bool{} // error rows no plan holds
	for _, pr := range b.Problems {
		if pr.Severity != pipeline.Error {
			continue
		}
		o := pr.Origin
		hit := false
		for _, r := range []pipeline.RowRef{{File: o.File, Sheet: o.Sheet, Row: o.Row}, {File: o.File, Sheet: o.Sheet, Row: 0}} {
			for _, i := range byRow[r] {
				rejected[i], hit = true, true
			}
		}
		if !hit {
			whole[o.File] = true
			if o.Row > 0 {
				loose[pipeline.RowRef{File: o.File, Sheet: o.Sheet, Row: o.Row}] = true
			}
		}
	}
	for _, om := range b.Omitted {
		if om.Severity == pipeline.Error {
			whole[om.File] = true
		}
	}
	for i, p := range b.Plans {
		for _, r := range p.Rows() {
			if whole[r.File] {
				rejected[i] = true
			}
		}
	}
	rows := map[pipeline.RowRef]bool{}
	for i, p := range b.Plans {
		if !rejected[i] {
			send = append(send, p)
			continue
		}
		rej.Plans = append(rej.Plans, p)
		for _, r := range p.Rows() {
			rows[r] = true
		}
	}
	for r := range loose {
		rows[r] = true
	}
	rej.Rows = sortedRows(rows, b.Files)
	for _, f := range b.Files {
		if whole[f] {
			rej.WholeFiles = append(rej.WholeFiles, f)
		}
	}
	for f := range whole {
		if !slices.Contains(rej.WholeFiles, f) {
			rej.WholeFiles = append(rej.WholeFiles, f) // a file not listed (a folder's)
		}
	}
	for _, pr := range b.Problems {
		o := pr.Origin
		if whole[o.File] || rows[pipeline.RowRef{File: o.File, Sheet: o.Sheet, Row: o.Row}] || rows[pipeline.RowRef{File: o.File, Sheet: o.Sheet, Row: 0}] {
			rej.Problems = append(rej.Problems, pr)
		}
	}
	return send, rej
}

// sortedRows lists rows by file in the order of files (others after, by
// name), then by sheet and row.
func sortedRows(rows map[pipeline.RowRef]bool, files []string) []pipeline.RowRef {
	out := make([]pipeline.RowRef, 0, len(rows))
	for r := range rows {
		out = append(out, r)
	}
	rank := func(f string) int {
		if i := slices.Index(files, f); i >= 0 {
			return i
		}
		return len(files)
	}
	slices.SortFunc(out, func(a, b pipeline.RowRef) int {
		switch {
		case rank(a.File) != rank(b.File):
			return rank(a.File) - rank(b.File)
		case a.File != b.File:
			if a.File < b.File {
				return -1
			}
			return 1
		case a.Sheet != b.Sheet:
			if a.Sheet < b.Sheet {
				return -1
			}
			return 1
		}
		return a.Row - b.Row
	})
	return out
}
