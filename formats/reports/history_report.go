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
	"github.com/eepipe/eepipe/templates"
)

// HistorySchema names the shape of the JSON history report.
const HistorySchema = "eepipe.history/v1"

// HistoryReport is what `eepipe history --report` writes: the runs and
// every counter they wrote (Sent false: the counter already held the
// file's value and was not sent).
type HistoryReport struct {
	Schema  string                  `json:"schema"`
	Runs    []pipeline.RunRecord    `json:"runs"`
	Entries []pipeline.HistoryEntry `json:"writes"`
	// PlanWrites are the plan requests (creates, metadata updates, deletes).
	PlanWrites []pipeline.PlanWriteEntry `json:"plan_writes"`
}

// HistoryCSVHeader is the header of the CSV history report: one row per
// counter written.
var HistoryCSVHeader = []string{
	"run_id", "run_started", "user", "host", "run_status", "change_set", "signed_off_by", "account", "plan_id", "plan_name",
	"target_id", "year_number", "financial_year", "target_type", "counter", "before", "after", "sent", "outcome", "written_at", "file",
}

func historyRow(e pipeline.HistoryEntry) []string {
	before := ""
	if e.Before != nil {
		before = strconv.FormatInt(*e.Before, 10)
	}
	return []string{
		strconv.FormatInt(e.Run.ID, 10), e.Run.Started.UTC().Format(time.RFC3339), e.Run.User, e.Run.Host, e.Run.Status, e.Run.ChangeSet, e.Run.Signer,
		e.Account, strconv.FormatInt(e.PlanID, 10), e.PlanName, strconv.FormatInt(e.TargetID, 10), strconv.Itoa(e.YearNumber),
		e.FinancialYear, e.TargetType, e.Counter, before, strconv.FormatInt(e.After, 10), strconv.FormatBool(e.Sent), e.Outcome,
		e.At.UTC().Format(time.RFC3339), e.File,
	}
}

// EncodeHistoryJSON writes to w the document a .json history report holds
// (history --json: on stdout).
func EncodeHistoryJSON(w io.Writer, h *HistoryReport) error {
	h.Schema = HistorySchema
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(h)
}

// WriteHistoryReport writes the history to path: .json, .csv (one row per
// counter written) or .xlsx (sheets Runs, Writes and Plan requests).
func WriteHistoryReport(path string, h *HistoryReport) error {
	h.Schema = HistorySchema
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return EncodeHistoryJSON(w, h) })
	case ".csv":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error {
			cw := table.NewCSVWriter(w) // formulas neutralised (table.CSVSafeField)
			if err := cw.Write(HistoryCSVHeader); err != nil {
				return err
			}
			for _, e := range h.Entries {
				if err := cw.Write(historyRow(e)); err != nil {
					return err
				}
			}
			cw.Flush()
			return cw.Error()
		})
	case ".xlsx":
		f := excelize.NewFile()
		defer f.Close()
		if err := f.SetSheetName("Sheet1", "Runs"); err != nil {
			return err
		}
		head := []any{"Run", "Started (UTC)", "Finished (UTC)", "User", "Host", "Status", "Service", "Accounts", "Files", "Change set", "Signed off by (verified sign-off)", "Command"}
		f.SetSheetRow("Runs", "A1", &head)
		for i, r := range h.Runs {
			var files []string
			for _, fl := range r.Files {
				files = append(files, fl.Path+" (sha256 "+fl.SHA256+")")
			}
			fin := ""
			if !r.Finished.IsZero() {
				fin = r.Finished.UTC().Format("2006-01-02 15:04:05")
			}
			row := []any{r.ID, r.Started.UTC().Format("2006-01-02 15:04:05"), fin, r.User, r.Host, r.Status, r.Service,
				strings.Join(r.Accounts, ", "), strings.Join(files, "; "), r.ChangeSet, r.Signer, r.Command}
			cell, _ := excelize.CoordinatesToCellName(1, i+2)
			f.SetSheetRow("Runs", cell, &row)
		}
		if _, err := f.NewSheet("Writes"); err != nil {
			return err
		}
		wh := make([]any, len(HistoryCSVHeader))
		for i, s := range HistoryCSVHeader {
			wh[i] = s
		}
		f.SetSheetRow("Writes", "A1", &wh)
		for i, e := range h.Entries {
			vals := historyRow(e)
			row := make([]any, len(vals))
			for j, v := range vals {
				row[j] = v
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && j != 5 {
					row[j] = n
				}
			}
			cell, _ := excelize.CoordinatesToCellName(1, i+2)
			f.SetSheetRow("Writes", cell, &row)
		}
		if _, err := f.NewSheet("Plan requests"); err != nil {
			return err
		}
		ph := []any{"Run", "Account", "Plan no.", "Name", "Request", "Outcome", "At (UTC)"}
		f.SetSheetRow("Plan requests", "A1", &ph)
		for i, p := range h.PlanWrites {
			row := []any{p.RunID, p.Account, p.PlanID, p.PlanName, p.Action, p.Outcome, p.At.UTC().Format("2006-01-02 15:04:05")}
			cell, _ := excelize.CoordinatesToCellName(1, i+2)
			f.SetSheetRow("Plan requests", cell, &row)
		}
		bold, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
		f.SetRowStyle("Plan requests", 1, 1, bold)
		f.SetRowStyle("Runs", 1, 1, bold)
		f.SetRowStyle("Writes", 1, 1, bold)
		for _, sh := range []string{"Runs", "Writes", "Plan requests"} {
			if err := templates.SetPrintLayout(f, sh, templates.PrintSetup{TitleFirst: 1, TitleLast: 1}); err != nil {
				return err
			}
		}
		return xlsx.WriteWorkbook(path, f)
	}
	return fmt.Errorf("--report %s: use a .json, .csv or .xlsx file name", path)
}
