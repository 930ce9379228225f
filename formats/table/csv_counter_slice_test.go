package table

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
)

// csvCounterSliceCases are flat CSV files whose counter cells take every
// path of the Assembler's counter reading: plain digits, spaces around
// them, decimals, negatives, error values, formula-neutralised text,
// blanks, unknown counter names, multi-line quoted fields (cells on a later
// line than their record), invalid UTF-8, rows of other plans and a second
// header layout.
var csvCounterSliceCases = []string{
	"plan_name,start_date,end_date,year_number,target_type,number_of_african_male_top_managers,number_of_white_female_top_managers\n" +
		"A,2025-09-01,2030-08-31,1,all_employees,3,4\n" +
		"A,2025-09-01,2030-08-31,1,disabled_employees,5, 2 \n" +
		"A,2025-09-01,2030-08-31,2,all_employees,,1.5\n" +
		"A,2025-09-01,2030-08-31,2,disabled_employees,-1,#REF!\n" +
		"B,2025-09-01,2030-08-31,1,all_employees,'=1+2,\"7\"\n" +
		"\"C\nD\",2025-09-01,2030-08-31,1,all_employees,3,4\n" +
		"A,2025-09-01,2030-08-31,3,all_employees,3,4\n",
	"plan_id;financial_year;target_type;number_of_african_male_top_managers;number_of_x;number_of_white_female_top_managers\n" +
		"4;2026/27;all_employees;\"1\n2\";3;4\n" +
		"4;2026/27;disabled_employees;2;\"\n\";\xff9\n" +
		"4;2027/28;all_employees;00012;; 12345678901234567890\n",
	"note,,\nplan_id,year_number,target_type,number_of_african_male_top_managers,,number_of_african_male_top_managers\n" +
		"1,1,all_employees,3,stray,4\n" +
		"1,\"1\",\"all_employees\",\"\n3\",,\n",
}

// TestCSVCounterSliceMatchesMap reads each case with the counters in the
// record's slice (as ReadCSV gives them) and again with the same cells in
// its map (as the other readers give them): the plans and every problem,
// with its line, column and message, must be the same.
func TestCSVCounterSliceMatchesMap(t *testing.T) {
	for i, src := range csvCounterSliceCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if checkCSVCounterSlice(t, []byte(src)) == 0 {
				t.Fatal("no record gave its counters in the slice")
			}
		})
	}
}

// FuzzCSVCounterSlice is TestCSVCounterSliceMatchesMap on arbitrary bytes.
func FuzzCSVCounterSlice(f *testing.F) {
	for _, s := range csvCounterSliceCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCSVCounterSlice(t, data)
	})
}

// checkCSVCounterSlice returns the number of records that gave counters in
// their slice.
func checkCSVCounterSlice(t *testing.T, data []byte) int {
	t.Helper()
	cat := pipeline.DefaultCatalog()
	bySlice, byMap := assemble.NewAssembler(cat), assemble.NewAssembler(cat)
	slices := 0
	var ps pipeline.Problems
	ReadCSV("c.csv", bytes.NewReader(data), cat, nil, func(r pipeline.Record) {
		bySlice.Add(r)
		if len(r.Counters) > 0 {
			slices++
		}
		cells := maps.Clone(r.Cells)
		for _, c := range r.Counters {
			if cells == nil {
				cells = map[string]pipeline.Cell{}
			}
			if _, dup := cells[c.Name]; dup {
				t.Fatalf("%s both in Cells and in Counters", c.Name)
			}
			cells[c.Name] = c.Cell
		}
		if r.Fixed != nil {
			for i, has := range r.Fixed.Has {
				if !has {
					continue
				}
				if cells == nil {
					cells = map[string]pipeline.Cell{}
				}
				name := pipeline.RowColumns[i]
				if _, dup := cells[name]; dup {
					t.Fatalf("%s both in Cells and in Fixed", name)
				}
				cells[name] = r.Fixed.Cells[i]
			}
		}
		byMap.Add(pipeline.Record{Origin: r.Origin, Cells: cells})
	}, &ps)
	plansS, psS := bySlice.Finish()
	plansM, psM := byMap.Finish()
	psS.Sort()
	psM.Sort()
	if !reflect.DeepEqual(psS, psM) {
		t.Fatalf("problems differ:\nslice: %s\nmap:   %s", problemLines(psS), problemLines(psM))
	}
	if !reflect.DeepEqual(plansS, plansM) {
		t.Fatalf("plans differ:\nslice: %+v\nmap:   %+v", plansS, plansM)
	}
	return slices
}

func problemLines(ps pipeline.Problems) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %v %s %q %s", p.Severity, p.Origin, p.Value, p.Message)
	}
	return b.String()
}
