package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/sector"
	"github.com/xuri/excelize/v2"
)

// SectorSheetName is the name of the worksheet AddSectorSheet adds.
const SectorSheetName = "Sector targets"

// sectorLevelLabels name the levels with sector targets for people.
var sectorLevelLabels = map[string]string{
	"top_managers":    "top management",
	"senior_managers": "senior management",
	"middle_managers": "middle management",
	"junior_managers": "junior management",
}

// disabilityLabel names the whole-workforce disability row.
const disabilityLabel = "people with disabilities (all levels)"

func sectorLevelLabel(level string) string {
	if l, ok := sectorLevelLabels[level]; ok {
		return l
	}
	return level
}

// WriteSectorReport writes a sector check report to path, as JSON, CSV or
// XLSX by the file name's extension, through WriteFileAtomic. The XLSX
// report opens on the CheckPrintSheet, laid out to print, followed by the
// wide Sector targets sheet with every figure and the charts.
func WriteSectorReport(path string, r *sector.SectorCheckReport) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return WriteSectorJSON(w, r) })
	case ".csv":
		return xlsx.WriteFileAtomic(path, func(w io.Writer) error { return WriteSectorCSV(w, r) })
	case ".xlsx":
		f := excelize.NewFile()
		defer f.Close()
		// First the sheet to print, then every figure in one wide table
		// (with the charts) for filters.
		if err := addCheckPrintSheet(f, r.Plans, r.TargetsSource); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := AddSectorSheet(f, r.Plans, r.TargetsSource); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.DeleteSheet("Sheet1"); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if idx, err := f.GetSheetIndex(CheckPrintSheet); err == nil {
			f.SetActiveSheet(idx)
		}
		return xlsx.WriteWorkbook(path, f)
	}
	return fmt.Errorf("report %s: use a .json, .csv or .xlsx file name", path)
}

// WriteSectorJSON writes the report as indented JSON: the notice, the file
// the figures came from, the caveat, and every plan, year and level.
func WriteSectorJSON(w io.Writer, r *sector.SectorCheckReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// sectorCSVHeader is the header of the CSV report: one row per plan, year,
// level and measure (designated_male, designated_female, disabled).
var sectorCSVHeader = []string{
	"source", "account", "plan_id", "plan_name", "company_vat_number", "company_registration_number", "company_id_number",
	"sector", "year_number", "financial_year", "final_year", "level", "measure", "status",
	"headcount", "count", "actual_pct", "target_pct", "short_points", "short_people", "reason",
	"targets_notice", "targets_file",
}

// WriteSectorCSV writes the report as a tidy CSV table: one row per plan,
// year, level and measure. Every row names the notice (with the advice to
// check the figures against the gazette) and the file the figures came from.
func WriteSectorCSV(w io.Writer, r *sector.SectorCheckReport) error {
	cw := table.NewCSVWriter(w)
	notice := r.Notice + " (check the figures against the gazette)"
	if err := cw.Write(sectorCSVHeader); err != nil {
		return err
	}
	for _, p := range r.Plans {
		base := []string{p.Source, p.Account, sectorIDText(p.PlanID), p.Name, p.Company.VAT, p.Company.Registration, p.Company.IDNumber, p.Sector}
		row := func(year *sector.SectorYearCheck, level, measure string, status sector.SectorStatus, headcount *int64, s *sector.ShareResult, target *sector.Pct, reason string) error {
			rec := append([]string(nil), base...)
			switch {
			case year != nil && year.Baseline: // the current workforce, before the milestones
				rec = append(rec, "baseline", "", "false")
			case year != nil:
				rec = append(rec, strconv.Itoa(year.YearNumber), sectorFYText(year.FinancialYear), strconv.FormatBool(year.Final))
			default:
				rec = append(rec, "", "", "")
			}
			rec = append(rec, level, measure, string(status))
			if headcount != nil {
				rec = append(rec, strconv.FormatInt(*headcount, 10))
			} else {
				rec = append(rec, "")
			}
			if s != nil {
				rec = append(rec, strconv.FormatInt(s.Count, 10), sectorPctText(s.ActualPct), s.TargetPct.String(), sectorPointsText(s), sectorPeopleText(s))
			} else {
				t := ""
				if target != nil {
					t = target.String()
				}
				rec = append(rec, "", "", t, "", "")
			}
			rec = append(rec, reason, notice, r.TargetsSource)
			return cw.Write(rec)
		}
		if len(p.Years) == 0 {
			if err := row(nil, "", "", p.Status, nil, nil, nil, p.Reason); err != nil {
				return err
			}
			continue
		}
		for i := range p.Years {
			y := &p.Years[i]
			for _, l := range y.Levels {
				var tm, tf *sector.Pct
				if l.HasTarget {
					tm, tf = &l.TargetMale, &l.TargetFemale
				}
				reason := sectorJoin("; ", l.Reason, l.Note)
				if err := row(y, l.Level, "designated_male", sectorShareStatus(l.Status, l.Male), l.Headcount, l.Male, tm, reason); err != nil {
					return err
				}
				if err := row(y, l.Level, "designated_female", sectorShareStatus(l.Status, l.Female), l.Headcount, l.Female, tf, reason); err != nil {
					return err
				}
			}
			d := y.Disability
			var of *int64
			if d.Share != nil {
				of = &d.Share.Of
			}
			if err := row(y, "all_levels", "disabled", d.Status, of, d.Share, &d.TargetPct, d.Reason); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func sectorShareStatus(level sector.SectorStatus, s *sector.ShareResult) sector.SectorStatus {
	switch {
	case s == nil:
		return level
	case s.Met:
		return sector.SectorMet
	}
	return sector.SectorShort
}

func sectorIDText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func sectorFYText(fy pipeline.FinancialYear) string {
	if fy == 0 {
		return ""
	}
	return fy.String()
}

func sectorPctText(v float64) string { return strconv.FormatFloat(sectorRound2(v), 'f', 2, 64) }

func sectorRound2(v float64) float64 { return math.Round(v*100) / 100 }

func sectorPointsText(s *sector.ShareResult) string {
	if s.Met {
		return "0"
	}
	return strconv.FormatFloat(sectorRound2(s.ShortPoints), 'f', 2, 64)
}

func sectorPeopleText(s *sector.ShareResult) string { return strconv.FormatInt(s.ShortPeople, 10) }

func sectorJoin(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
