package main

import (
	"crypto/sha256"
	"strings"

	"github.com/eepipe/eepipe/formats/export"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
	"github.com/xuri/excelize/v2"
)

// readSavedSet reads a whole change set file through the streaming reader
// apply uses (reports.ChangeSetFile), signature checked.
func readSavedSet(path string) (*savedset.SavedChangeSet, error) {
	var plans []savedset.SavedPlan
	s, err := (&reports.ChangeSetFile{Path: path}).Read(func(_ *savedset.SavedChangeSet, _ int, p *savedset.SavedPlan, _ [sha256.Size]byte) error {
		plans = append(plans, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Plans = plans
	return s, nil
}

// writeFlatWorkbook writes plans as a flat XLSX workbook, as eepipe export
// --layout flat does.
func writeFlatWorkbook(path string, plans []*pipeline.InputPlan) error {
	out := make([]export.Plan, len(plans))
	for i, p := range plans {
		out[i] = export.Plan{Plan: p}
	}
	return export.WriteFlatXLSX(path, out, export.Options{})
}

// commentText is the plain text of a comment of a workbook read back.
func commentText(c excelize.Comment) string {
	if len(c.Paragraph) == 0 {
		return c.Text
	}
	var b strings.Builder
	for _, p := range c.Paragraph {
		b.WriteString(p.Text)
	}
	return b.String()
}
