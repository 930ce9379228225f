package reports

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/templates"
)

// rrWellFormed reports whether b is well-formed XML.
func rrWellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// FuzzReconcileCopySheet streams arbitrary worksheet XML through the
// copy's sheet rewriter with marks: it never panics, and a well-formed
// sheet it accepts comes out well-formed.
func FuzzReconcileCopySheet(f *testing.F) {
	f.Add([]byte(`<worksheet xmlns="`+nsMain+`"><sheetData><row r="2"><c r="B2" s="0"><v>1</v></c></row></sheetData></worksheet>`), "B2")
	f.Add([]byte(`<worksheet xmlns="`+nsMain+`"><sheetPr/><sheetViews><sheetView tabSelected="1"/></sheetViews><sheetData/><pageSetup orientation="portrait"/><legacyDrawingHF r:id="x" xmlns:r="`+nsRel+`"/></worksheet>`), "C3")
	f.Add([]byte(`<worksheet xmlns="`+nsMain+`"><cols><col min="1" max="3" style="0"/></cols><sheetData><row><c><v>1</v></c><c t="inlineStr"><is><t>x</t></is></c></row><row r="5" customFormat="1" s="0"/></sheetData><headerFooter><oddFooter>a</oddFooter></headerFooter></worksheet>`), "A5")
	f.Fuzz(func(t *testing.T, sheet []byte, ref string) {
		col, row := xlsx.CellRef([]byte(ref))
		if col == 0 {
			t.Skip()
		}
		styles, err := rrParseStyles([]byte(annotateMinimalStyles))
		if err != nil {
			t.Fatal(err)
		}
		c := &rrCopy{Styles: styles}
		j := &rrSheetJob{Info: xlsx.Sheet{Name: "S"}, Marks: []rrCellMark{{Col: col, Row: row, Ref: strings.ToUpper(ref), Note: &rrNote{Fill: templates.DiffFill}}}}
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		err = c.streamSheet(w, bytes.NewReader(sheet), j)
		w.Flush()
		if err != nil || rrWellFormed(sheet) != nil {
			return
		}
		if err := rrWellFormed(out.Bytes()); err != nil {
			t.Fatalf("the copy of a well-formed sheet is not: %v\n%s", err, out.Bytes())
		}
		if j.Marks[0].Style == 0 {
			t.Fatalf("the mark got no style:\n%s", out.Bytes())
		}
	})
}
