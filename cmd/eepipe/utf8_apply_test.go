package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/apiclient/sandbox"
)

// TestApplyRefusesNonUTF8XLSXName: a flat workbook whose plan name holds
// bytes that are not UTF-8 (an inline string, as a damaged or hand-made
// file has) is refused at that cell before any request: the service would
// store U+FFFD, the name would never match again, and every later run
// (after one lost create response) would create one more plan.
func TestApplyRefusesNonUTF8XLSXName(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	f := excelize.NewFile()
	f.SetSheetName("Sheet1", "Targets")
	f.SetSheetRow("Targets", "A1", &[]any{"plan_name", "start_date", "end_date", "year_number", "target_type", cAMT})
	f.SetSheetRow("Targets", "A2", &[]any{"placeholder", "2025-09-01", "2030-08-31", 1, "all_employees", 3})
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	cellA2 := regexp.MustCompile(`<c r="A2"[^>]*>.*?</c>`)
	patched := false
	for _, zf := range zr.File {
		rc, _ := zf.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if zf.Name == "xl/worksheets/sheet1.xml" {
			nb := cellA2.ReplaceAll(b, []byte(`<c r="A2" t="inlineStr"><is><t>Caf`+"\xe9"+` Plan</t></is></c>`))
			patched = !bytes.Equal(nb, b)
			b = nb
		}
		w, _ := zw.Create(zf.Name)
		w.Write(b)
	}
	zw.Close()
	if !patched {
		t.Fatal("the cell was not patched")
	}
	path := filepath.Join(e.dir, "latin1.xlsx")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("apply", path)
	if r.code != ExitInvalid || !strings.Contains(r.err, "A2") || !strings.Contains(r.err, "not UTF-8") {
		t.Fatalf("exit %d, want 2 with an error at A2\n%s", r.code, r.err)
	}
	if st := e.srv.Sandbox.Stats(); st.Requests != 0 {
		t.Fatalf("%d requests sent for an invalid file", st.Requests)
	}
}
