package table_test

import (
	"bytes"
	"testing"

	"github.com/eepipe/eepipe/formats/internal/readback"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/pipeline"
)

// FuzzReadCSV feeds arbitrary bytes to the CSV reader: it must never panic,
// and every problem must say where it is.
func FuzzReadCSV(f *testing.F) {
	seeds := []string{
		"plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers\nA,2025-09-01,2030-08-31,1,all_employees,3\n",
		"\ufeffplan_id;financial_year;target_type;number_of_white_female_top_managers\r\n4;2026/27;disabled_employees;\"1\"\r\n",
		"plan_id\tyear_number\ttarget_type\n1\t1\tall_employees\n",
		"title\n\"multi\nline\",x\ntarget_type,plan_id\nall_employees,1,extra\n",
		"target_type,plan_name\n\"unterminated,x\n",
		"target_type,pl\"an\n",
		"",
		"\xff\xfet\x00a\x00r\x00g\x00e\x00t\x00_\x00t\x00y\x00p\x00e\x00\n\x00",
		"target_type,number_of_x\nall_employees,-1\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []pipeline.Record
		var ps pipeline.Problems
		table.ReadCSV("fuzz.csv", bytes.NewReader(data), pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
		readback.CheckRead(t, recs, ps)
	})
}

func TestReadCSVUTF16(t *testing.T) {
	text := "plan_id\tyear_number\ttarget_type\tnumber_of_white_male_top_managers\r\n12\t1\tall_employees\t4\r\n"
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xFE})
	for _, r := range text {
		b.WriteByte(byte(r))
		b.WriteByte(0)
	}
	var recs []pipeline.Record
	var ps pipeline.Problems
	table.ReadCSV("u16.csv", &b, pipeline.DefaultCatalog(), nil, readback.Collect(&recs), &ps)
	if len(ps) != 0 || len(recs) != 1 || recs[0].Cells["number_of_white_male_top_managers"].Text != "4" {
		t.Fatalf("UTF-16 CSV: %v %+v", ps, recs)
	}
}
