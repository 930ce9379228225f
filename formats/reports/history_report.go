package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
		return writeHistoryXLSX(path, h)
	}
	return fmt.Errorf("--report %s: use a .json, .csv or .xlsx file name", path)
}

// writeHistoryXLSX writes the XLSX history report: sheets Runs, Writes
// and Plan requests, each column as wide as its values (a value longer
// than rrMaxWidth wraps), the header repeated on every printed page. Runs and Writes are too wide for one page at a readable size:
// they print at templates.WideScale across pages, each repeating the
// run's number.
func writeHistoryXLSX(path string, h *HistoryReport) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Runs"); err != nil {
		return err
	}
	st, err := templates.NewOverviewStyles(f)
	if err != nil {
		return err
	}
	runs := [][]any{{"Run", "Started (UTC)", "Finished (UTC)", "User", "Host", "Status", "Service", "Accounts", "Files", "Change set", "Signed off by (verified sign-off)", "Command"}}
	for _, r := range h.Runs {
		var files []string
		for _, fl := range r.Files {
			files = append(files, fl.Path+" (sha256 "+fl.SHA256+")")
		}
		fin := ""
		if !r.Finished.IsZero() {
			fin = r.Finished.UTC().Format("2006-01-02 15:04:05")
		}
		runs = append(runs, []any{r.ID, r.Started.UTC().Format("2006-01-02 15:04:05"), fin, r.User, r.Host, r.Status, r.Service,
			strings.Join(r.Accounts, ", "), strings.Join(files, "; "), r.ChangeSet, r.Signer, r.Command})
	}
	if err := historySheet(f, "Runs", runs, st, templates.WidePrint(1)); err != nil {
		return err
	}
	writes := [][]any{make([]any, len(HistoryCSVHeader))}
	for i, s := range HistoryCSVHeader {
		writes[0][i] = s
	}
	for _, e := range h.Entries {
		vals := historyRow(e)
		row := make([]any, len(vals))
		for j, v := range vals {
			row[j] = v
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && j != 5 {
				row[j] = n
			}
		}
		writes = append(writes, row)
	}
	if err := historySheet(f, "Writes", writes, st, templates.WidePrint(1)); err != nil {
		return err
	}
	plans := [][]any{{"Run", "Account", "Plan no.", "Name", "Request", "Outcome", "At (UTC)"}}
	for _, p := range h.PlanWrites {
		plans = append(plans, []any{p.RunID, p.Account, p.PlanID, p.PlanName, p.Action, p.Outcome, p.At.UTC().Format("2006-01-02 15:04:05")})
	}
	if err := historySheet(f, "Plan requests", plans, st, templates.PrintSetup{TitleFirst: 1, TitleLast: 1}); err != nil {
		return err
	}
	return xlsx.WriteWorkbook(path, f)
}

// historySheet writes rows (the first the header) to sheet, which it adds
// unless it exists, in st's header and text styles, fits the columns to
// the values and gives the sheet its page setup.
func historySheet(f *excelize.File, sheet string, rows [][]any, st templates.OverviewStyles, print templates.PrintSetup) error {
	if idx, _ := f.GetSheetIndex(sheet); idx < 0 {
		if _, err := f.NewSheet(sheet); err != nil {
			return err
		}
	}
	fit := newRRWidths(len(rows[0]))
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			return err
		}
		for j, v := range row {
			if i == 0 {
				// Bold runs wider than the default font: a margin.
				fit.min(j, float64(utf8.RuneCountInString(fmt.Sprint(v)))*1.1+2)
				continue
			}
			fit.seeAt(i+1, j, v)
		}
	}
	last, _ := excelize.CoordinatesToCellName(len(rows[0]), len(rows))
	if err := f.SetCellStyle(sheet, "A1", last, st.Text); err != nil {
		return err
	}
	end, _ := excelize.CoordinatesToCellName(len(rows[0]), 1)
	if err := f.SetCellStyle(sheet, "A1", end, st.Header); err != nil {
		return err
	}
	if err := fit.apply(f, sheet, 2, len(rows), st.Wrap); err != nil {
		return err
	}
	return templates.SetPrintLayout(f, sheet, print)
}
