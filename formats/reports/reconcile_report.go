package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
)

// SummarySheet is the name of the sheet the annotated copy adds, unless the
// workbook already has a sheet of that name.
const SummarySheet = "Summary"

// commentAuthor signs the comments of the annotated copy.
const commentAuthor = "eepipe"

// WriteReconcileJSON writes the reconciliation as indented JSON (schema
// pipeline.ReconcileSchema, documented in docs/export-and-reconcile.md).
func WriteReconcileJSON(path string, r *diff.Reconciliation) error {
	return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return EncodeReconcileJSON(w, r) })
}

// EncodeReconcileJSON writes to w the document WriteReconcileJSON writes
// to its file (reconcile --json: on stdout).
func EncodeReconcileJSON(w io.Writer, r *diff.Reconciliation) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReconcileCSVHeader is the header of the CSV reconciliation report: one
// row per differing counter, per differing plan field, and per plan that is
// missing on the server, only on the server or not compared.
var ReconcileCSVHeader = []string{
	"presence", "in_sync", "account", "company_id", "plan_id", "plan_name", "start_date",
	"kind", "year_number", "financial_year", "target_type", "milestone_id", "target_id",
	"name", "workbook_value", "server_value", "file", "sheet", "cell", "line", "column", "reason",
	"class", "last_applied_value", "last_applied_run", "last_applied_at",
}

// WriteReconcileCSV writes the reconciliation as a CSV table with
// ReconcileCSVHeader. Plans in sync get no row.
func WriteReconcileCSV(path string, r *diff.Reconciliation) error {
	return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
		cw := table.NewCSVWriter(w)
		if err := cw.Write(ReconcileCSVHeader); err != nil {
			return err
		}
		for _, row := range rrReconcileRows(r) {
			if err := cw.Write(row.csv()); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// rrReconcileRow is one line of the CSV report and of the Summary sheet.
type rrReconcileRow struct {
	plan     *diff.ReconciledPlan
	kind     string // plan, field, counter
	target   *diff.TargetDifference
	name     string
	workbook string
	server   string
	loc      diff.Location
	class    diff.ChangeClass // counters and fields: the three-way classification
	last     *pipeline.LastWrite
	// lastValue is the value last applied (a counter's number, a field's
	// text); last names its run.
	lastValue string
}

func (r rrReconcileRow) csv() []string {
	p := r.plan
	out := []string{
		string(p.Presence), strconv.FormatBool(p.InSync), p.Account, p.CompanyID, rrIdText(p.PlanID), p.PlanName, p.StartDate,
		r.kind, "", "", "", "", "",
		r.name, r.workbook, r.server, r.loc.File, r.loc.Sheet, r.loc.Cell, rrIntText(r.loc.Line), rrIntText(r.loc.Column), "",
		string(r.class), "", "", "",
	}
	if l := r.last; l != nil {
		out[23], out[24], out[25] = r.lastValue, strconv.FormatInt(l.RunID, 10), l.At.UTC().Format(time.RFC3339)
	}
	if t := r.target; t != nil {
		out[8], out[9], out[10], out[11], out[12] = strconv.Itoa(t.YearNumber), t.FinancialYear, t.TargetType, rrIdText(t.MilestoneID), rrIdText(t.TargetID)
	}
	if r.kind == "plan" {
		out[21] = p.Reason
	}
	return out
}

func rrIdText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func rrIntText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func rrReconcileRows(r *diff.Reconciliation) []rrReconcileRow {
	var rows []rrReconcileRow
	for i := range r.Plans {
		p := &r.Plans[i]
		if p.Presence != diff.PresencePresent {
			row := rrReconcileRow{plan: p, kind: "plan"}
			if p.Location != nil {
				row.loc = *p.Location
			}
			rows = append(rows, row)
		}
		for _, f := range p.Fields {
			row := rrReconcileRow{plan: p, kind: "field", name: f.Field, workbook: f.Workbook, server: f.Server, class: f.Class, last: f.LastRun()}
			if f.LastApplied != nil {
				row.lastValue = f.LastApplied.Value
			}
			if f.Location != nil {
				row.loc = *f.Location
			}
			rows = append(rows, row)
		}
		for j := range p.Targets {
			t := &p.Targets[j]
			for _, c := range t.Counters {
				row := rrReconcileRow{
					plan: p, kind: "counter", target: t, name: c.Counter,
					workbook: strconv.FormatInt(c.Workbook, 10), server: strconv.FormatInt(c.Server, 10), loc: c.Location,
					class: c.Class, last: c.LastApplied,
				}
				if c.LastApplied != nil {
					row.lastValue = strconv.FormatInt(c.LastApplied.Value, 10)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// ReconcileXLSXPaths returns where WriteReconcileXLSX writes the annotated
// copies of sources for a report path: the path itself for one source, and
// path-<source name>.xlsx for each of several.
func ReconcileXLSXPaths(report string, sources []string) []string {
	if len(sources) <= 1 {
		return []string{report}
	}
	ext := filepath.Ext(report)
	stem := strings.TrimSuffix(report, ext)
	out := make([]string, len(sources))
	used := map[string]int{}
	for i, s := range sources {
		name := strings.TrimSuffix(filepath.Base(s), filepath.Ext(s))
		used[name]++
		if used[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, used[name])
		}
		out[i] = stem + "-" + name + ext
	}
	return out
}

// WriteReconcileXLSX writes to dst the consultant's annotated copy of the
// source workbook src (XLSX as it is; a CSV turned into a worksheet, row n
// being line n): every counter whose value differs from the service's is
// filled in colour (templates.DiffFill) and carries a comment with the
// service's value; plan-level findings (missing on the server, metadata
// differences, not compared) mark the plan's first cell (templates.PlanFill);
// a Summary sheet, after the workbook's own sheets and the active one,
// counts and lists every finding of r. An XLSX source is copied by
// streaming it (reconcile_copy.go). With src "" the workbook holds only the Summary sheet. Several
// sources get one copy each (ReconcileXLSXPaths names them). The result
// tells how the copy was written.
func WriteReconcileXLSX(dst, src string, r *diff.Reconciliation) (ReconcileCopy, error) {
	if src == "" {
		f := excelize.NewFile()
		defer f.Close()
		if err := f.SetSheetName(f.GetSheetName(0), SummarySheet); err != nil {
			return ReconcileCopy{}, err
		}
		if err := rrWriteReconcileSummary(f, SummarySheet, r, nil); err != nil {
			return ReconcileCopy{}, err
		}
		return ReconcileCopy{}, xlsx.WriteWorkbook(dst, f)
	}
	return writeAnnotatedCopy(dst, src, r)
}

// ReconcileCopy tells how WriteReconcileXLSX wrote an annotated copy: an
// XLSX source is streamed (reconcile_copy.go), or, when the stream does
// not handle it, left to excelize, slower and heavier on memory (see
// docs/performance.md); a CSV source, or none, is always built with
// excelize (neither field set).
type ReconcileCopy struct {
	// Streamed is true when the workbook was copied by streaming it.
	Streamed bool
	// Fallback is why the workbook was left to excelize (nil when it was
	// streamed, or not a workbook).
	Fallback error
}
