package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/eepipe/eepipe/templates"
	"github.com/gocarina/gocsv"
	"github.com/xuri/excelize/v2"
)

// RunReportSchema names the version of the run report's JSON shape.
const RunReportSchema = "eepipe.run/v1"

// RunReportJSON is the JSON run report (`apply --report run.json`):
// the summary, the requests sent, one entry per input row, the plans that
// failed or carry notes, the recalculations, and the notes on the run as
// a whole (its end not recorded in the state store).
type RunReportJSON struct {
	Schema         string            `json:"schema"`
	Started        time.Time         `json:"started"`
	Finished       time.Time         `json:"finished"`
	DryRun         bool              `json:"dry_run"`
	Interrupted    bool              `json:"interrupted"`
	Fatal          string            `json:"fatal,omitempty"`
	Notes          []string          `json:"notes,omitempty"`
	SignedOffBy    string            `json:"signed_off_by,omitempty"`
	Summary        run.RunSummary    `json:"summary"`
	Requests       run.RequestCounts `json:"requests"`
	Rows           []run.RowResult   `json:"rows"`
	Plans          []RunReportPlan   `json:"plans"`
	Recalculations []RunReportRecalc `json:"recalculations"`
}

// RunReportPlan is one plan of the JSON run report.
type RunReportPlan struct {
	Plan      string      `json:"plan"`
	Account   string      `json:"account,omitempty"`
	Action    diff.Action `json:"action"`
	Outcome   run.Outcome `json:"outcome"`
	PlanID    int64       `json:"plan_id,omitempty"`
	OldPlanID int64       `json:"old_plan_id,omitempty"`
	Error     string      `json:"error,omitempty"`
	Notes     []string    `json:"notes,omitempty"`
	Origin    string      `json:"origin,omitempty"`
}

// RunReportRecalc is one recalculation of the JSON run report.
type RunReportRecalc struct {
	Account       string  `json:"account"`
	ScorecardID   string  `json:"scorecard_id"`
	Accepted      bool    `json:"accepted"`
	Attempts      int     `json:"attempts"`
	WaitedSeconds float64 `json:"waited_seconds"`
	Error         string  `json:"error,omitempty"`
}

// NewRunReportJSON converts a run report to its JSON shape.
func NewRunReportJSON(r *run.RunReport) RunReportJSON {
	out := RunReportJSON{
		Schema: RunReportSchema, Started: r.Started.UTC(), Finished: r.Finished.UTC(), DryRun: r.DryRun,
		Interrupted: r.Interrupted, Notes: r.Notes, SignedOffBy: r.Signer, Summary: r.Summary(), Requests: r.Requests, Rows: r.Rows(),
		Plans: []RunReportPlan{}, Recalculations: []RunReportRecalc{},
	}
	if out.Rows == nil {
		out.Rows = []run.RowResult{}
	}
	if r.Fatal != nil {
		out.Fatal = r.Fatal.Error()
	}
	for _, p := range r.Plans {
		rp := RunReportPlan{Plan: p.Diff.Title(), Account: p.Diff.Account, Action: p.Diff.Action, Outcome: p.Outcome,
			PlanID: p.PlanID, OldPlanID: p.OldPlanID, Notes: p.Notes}
		if p.Err != nil {
			rp.Error = p.Err.Error()
		}
		if p.Diff.Input != nil && p.Diff.Input.Origin.File != "" {
			rp.Origin = p.Diff.Input.Origin.String()
		}
		out.Plans = append(out.Plans, rp)
	}
	for _, rc := range r.Recalcs {
		j := RunReportRecalc{Account: rc.Account, ScorecardID: rc.ScorecardID, Accepted: rc.Accepted, Attempts: rc.Attempts,
			WaitedSeconds: rc.Waited.Round(time.Millisecond).Seconds()}
		if rc.Err != nil {
			j.Error = rc.Err.Error()
		}
		out.Recalculations = append(out.Recalculations, j)
	}
	return out
}

// runRow is one line of the CSV and XLSX run reports.
type runRow struct {
	File            string `csv:"file"`
	Location        string `csv:"location"`
	Account         string `csv:"account"`
	CompanyID       string `csv:"company_id"`
	PlanName        string `csv:"plan_name"`
	StartDate       string `csv:"start_date"`
	YearNumber      string `csv:"year_number"`
	FinancialYear   string `csv:"financial_year"`
	TargetType      string `csv:"target_type"`
	Outcome         string `csv:"outcome"`
	PlanID          string `csv:"plan_id"`
	MilestoneID     string `csv:"milestone_id"`
	TargetID        string `csv:"target_id"`
	CountersChanged int    `csv:"counters_changed"`
	Changes         string `csv:"changes"`
	Error           string `csv:"error"`
	Held            string `csv:"held"`
}

var runColumns = []string{"file", "location", "account", "company_id", "plan_name", "start_date", "year_number",
	"financial_year", "target_type", "outcome", "plan_id", "milestone_id", "target_id", "counters_changed", "changes", "error", "held"}

func runRows(r *run.RunReport) []runRow {
	var out []runRow
	for _, row := range r.Rows() {
		out = append(out, runRow{
			File: row.File, Location: row.Location, Account: row.Account, CompanyID: row.CompanyID,
			PlanName: row.PlanName, StartDate: row.StartDate, YearNumber: blankZero(int64(row.YearNumber)),
			FinancialYear: row.FinancialYear, TargetType: row.TargetType, Outcome: string(row.Outcome),
			PlanID: blankZero(row.PlanID), MilestoneID: blankZero(row.MilestoneID), TargetID: blankZero(row.TargetID),
			CountersChanged: row.Changed, Changes: row.ChangesText(), Error: row.Error, Held: row.HeldText(),
		})
	}
	return out
}

func blankZero(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// WriteRunReport writes the run report to path in the format its
// extension names: .json (RunReportJSON), .csv (one line per input row) or
// .xlsx (a Rows sheet with one line per input row and a Summary sheet).
// The file is written atomically.
func WriteRunReport(path string, r *run.RunReport) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return EncodeRunReportJSON(w, r) })
	case ".csv":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
			rows := runRows(r)
			if len(rows) == 0 {
				_, err := io.WriteString(w, strings.Join(runColumns, ",")+"\n")
				return err
			}
			return gocsv.MarshalCSV(rows, table.NewCSVWriter(w))
		})
	case ".xlsx":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return writeRunXLSX(w, r) })
	}
	return fmt.Errorf("run report %s: unknown format %q; use a .json, .csv or .xlsx name", path, filepath.Ext(path))
}

// EncodeRunReportJSON writes to w the document a .json run report holds
// (RunReportJSON; diff --json: on stdout).
func EncodeRunReportJSON(w io.Writer, r *run.RunReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewRunReportJSON(r))
}

func writeRunXLSX(w io.Writer, r *run.RunReport) error {
	f := excelize.NewFile()
	defer f.Close()
	const rowsSheet, summarySheet = "Rows", "Summary"
	if err := f.SetSheetName("Sheet1", rowsSheet); err != nil {
		return err
	}
	if err := writeRunRows(f, rowsSheet, r); err != nil {
		return err
	}
	if err := writeRunSummary(f, summarySheet, r); err != nil {
		return err
	}
	return f.Write(w)
}

// writeRunRows streams the run's rows into rowsSheet, an existing empty
// sheet of f: a header with a filter, frozen, and each row's outcome
// filled by its kind.
func writeRunRows(f *excelize.File, rowsSheet string, r *run.RunReport) error {
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Fill: templates.SolidFill(templates.BandFill)})
	if err != nil {
		return err
	}
	fills := map[string]string{
		string(run.OutcomeFailed): templates.BadFill, string(run.OutcomeNotApplied): templates.WarnFill,
		string(run.OutcomeCreated): templates.GoodFill, string(run.OutcomeUpdated): templates.GoodFill, string(run.OutcomeRecreated): templates.GoodFill,
	}
	styles := map[string]int{}
	for k, c := range fills {
		id, err := f.NewStyle(&excelize.Style{Fill: templates.SolidFill(c)})
		if err != nil {
			return err
		}
		styles[k] = id
	}
	// Page setup before the stream writer takes the sheet.
	if err := templates.SetPrintLayout(f, rowsSheet, templates.WidePrint(2)); err != nil { // file, location on every page
		return err
	}
	sw, err := f.NewStreamWriter(rowsSheet)
	if err != nil {
		return err
	}
	if err := streamHeaderRow(sw, []float64{24, 16, 12, 10, 28, 11, 6, 9, 18, 13, 9, 11, 10, 9, 60, 80, 80}, runColumns, bold); err != nil {
		return err
	}
	rows := r.Rows()
	lastCol, _ := excelize.ColumnNumberToName(len(runColumns))
	if err := f.AutoFilter(rowsSheet, fmt.Sprintf("A1:%s%d", lastCol, max(len(rows)+1, 2)), nil); err != nil {
		return err
	}
	for i, row := range rows {
		outcome := any(string(row.Outcome))
		if id, ok := styles[string(row.Outcome)]; ok {
			outcome = excelize.Cell{StyleID: id, Value: string(row.Outcome)}
		}
		vals := []any{row.File, row.Location, row.Account, row.CompanyID, row.PlanName, row.StartDate, zeroNil(int64(row.YearNumber)),
			row.FinancialYear, row.TargetType, outcome, zeroNil(row.PlanID), zeroNil(row.MilestoneID), zeroNil(row.TargetID),
			row.Changed, row.ChangesText(), row.Error, row.HeldText()}
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, vals); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// writeRunSummary adds summarySheet to f: the run's times, counts,
// recalculations and notes, one label and value a row.
func writeRunSummary(f *excelize.File, summarySheet string, r *run.RunReport) error {
	if _, err := f.NewSheet(summarySheet); err != nil {
		return err
	}
	s := r.Summary()
	lines := [][2]any{
		{"started", r.Started.UTC().Format(time.RFC3339)}, {"finished", r.Finished.UTC().Format(time.RFC3339)},
		{"dry run", r.DryRun}, {"interrupted", r.Interrupted},
		{"plans created", s.PlansCreated}, {"plans updated", s.PlansUpdated}, {"plans recreated", s.PlansRecreated},
		{"plans unchanged", s.PlansUnchanged}, {"plans failed", s.PlansFailed}, {"plans not applied", s.PlansNotApplied},
		{"targets patched", s.TargetsPatched}, {"counters changed", s.CountersChanged},
		{"requests", s.Requests}, {"writes", s.Writes},
		{"recalculations accepted", s.RecalcsAccepted}, {"recalculations failed", s.RecalcsFailed},
		{"elapsed seconds", s.Elapsed.Round(time.Millisecond).Seconds()},
	}
	if r.Signer != "" {
		lines = append(lines, [2]any{"signed off by (verified sign-off)", r.Signer})
	}
	if r.Fatal != nil {
		lines = append(lines, [2]any{"fatal error", r.Fatal.Error()})
	}
	for _, n := range r.Notes {
		lines = append(lines, [2]any{"note", n})
	}
	for _, rc := range r.Recalcs {
		v := "accepted"
		if !rc.Accepted {
			v = fmt.Sprintf("failed: %v", rc.Err)
		}
		lines = append(lines, [2]any{"recalculation " + rc.ScorecardID + " (" + rc.Account + ")", v})
	}
	labelWidth := 36 // wide enough for every label, a recalculation's too (up to 80)
	for i, l := range lines {
		if err := f.SetSheetRow(summarySheet, fmt.Sprintf("A%d", i+1), &[]any{l[0], l[1]}); err != nil {
			return err
		}
		labelWidth = min(max(labelWidth, utf8.RuneCountInString(fmt.Sprint(l[0]))+2), 80)
	}
	if err := f.SetColWidth(summarySheet, "A", "A", float64(labelWidth)); err != nil {
		return err
	}
	if err := f.SetColWidth(summarySheet, "B", "B", 60); err != nil {
		return err
	}
	return templates.SetPrintLayout(f, summarySheet, templates.PrintSetup{Portrait: true})
}

func zeroNil(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
