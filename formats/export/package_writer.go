package export

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eepipe/eepipe/formats/grid"
	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/templates"
)

// GridWorkbook is a workbook of grid plan sheets that is written part by
// part: the small sheets (Overview, Instructions, Lists, the Sector
// targets sheet's header, formats and charts), the styles and the
// workbook's names live in its excelize File, where the hidden Chart data
// sheet exists empty and the plan sheets not at all; its WriteTo saves
// that File (a few MB) and copies its parts into the output package,
// adding the plan sheets to the workbook part (addPlanSheets) and writing
// each plan sheet, its drawing and its charts as SpreadsheetML straight
// into the output (templates.WritePlanSheetXML), and the Sector targets
// sheet's data rows among its header rows. Nothing holds more than one
// plan sheet.
//
// excelize would keep every sheet it writes in memory until the workbook
// is saved, build the whole package in a buffer, walk every part of the
// package for each chart added and list every sheet for each sheet added
// (quadratic in sheets).
//
// Callers may add sheets (after the plan sheets, never under a plan
// sheet's name) and change the File's other sheets (the active sheet,
// hidden sheets) before WriteTo; what they write to the Chart data sheet
// is replaced. Save the workbook with WriteTo
// (WriteWorkbook), never with the File's own Write or SaveAs, which would
// leave the plan sheets empty.
//
// The plan sheets' parts are laid out and compressed from the moment the
// workbook is made, on every core, beside the building of its File
// (planParts); they are numbered from 1 (xl/worksheets/sheet1.xml for the
// first plan sheet), and WriteTo numbers them, and the File's own parts,
// in the package.
type GridWorkbook struct {
	File   *excelize.File
	grid   *grid.Build
	charts *chartLayout // nil: no charts
	widths []float64    // the plan sheets' column widths (templates.PlanColumnWidths)
	// sector, when set, has the data rows of the Sector targets sheet,
	// written into its part among the rows excelize holds (the header and
	// the chart data).
	sector *reports.SectorStreamRows
	// plans are the plan sheets' parts and parts their jobs.
	plans      []*planSheetPart
	drawings   int // how many drawings the plan sheets have
	chartParts int // and how many charts
	parts      *xlsx.ZipParts
}

// pendingPlans is how many plans' parts may be laid out and compressed ahead
// of the writing (about 18 KB each, compressed): 9 MB.
const pendingPlans = 512

// planParts numbers the plan sheets' drawings and charts and starts
// laying out and compressing their parts.
func (wb *GridWorkbook) planParts() {
	wb.widths = templates.PlanColumnWidths(wb.grid.Cat)
	wb.plans = make([]*planSheetPart, len(wb.grid.Names))
	for i := range wb.plans {
		sp := &planSheetPart{plan: i}
		if n := wb.chartCount(i); n > 0 {
			wb.drawings++
			sp.drawing, sp.chart, sp.charts = wb.drawings, wb.chartParts+1, n
			wb.chartParts += n
		}
		wb.plans[i] = sp
	}
	wb.parts = xlsx.NewZipParts(len(wb.plans), runtime.GOMAXPROCS(0), pendingPlans, func(i int, set *xlsx.ZipPartSet) error {
		if err := wb.writePlanParts(set, "xl/worksheets/sheet"+strconv.Itoa(i+1)+".xml", wb.plans[i]); err != nil {
			return fmt.Errorf("sheet %s: %w", wb.grid.Names[i], err)
		}
		return nil
	})
}

// Close closes the workbook's File (and stops its plan sheets' parts
// when it was not written).
func (wb *GridWorkbook) Close() error {
	if wb.parts != nil {
		wb.parts.Close()
	}
	return wb.File.Close()
}

// WriteTo writes the workbook as an XLSX package to w.
func (wb *GridWorkbook) WriteTo(w io.Writer, opts ...excelize.Options) (int64, error) {
	var skel bytes.Buffer
	if _, err := wb.File.WriteTo(&skel, opts...); err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	err := wb.writePackage(cw, skel.Bytes())
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// planSheetPart is a worksheet part the package writer writes itself.
type planSheetPart struct {
	plan    int // index of the plan, -1 for the Chart data sheet
	drawing int // number of the plan sheet's drawing part, 0 = none
	chart   int // number of its first chart part
	charts  int // how many charts it has
}

// chartCount returns how many charts the i-th plan sheet has.
func (wb *GridWorkbook) chartCount(i int) int {
	if wb.charts == nil {
		return 0
	}
	return wb.charts.Count(i)
}

// Content types and relationship types of the parts written here.
const (
	drawingContentType = "application/vnd.openxmlformats-officedocument.drawing+xml"
	chartContentType   = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
	relDrawing         = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/drawing"
	relChart           = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart"
	contentTypesPart   = "[Content_Types].xml"
	relsHeader         = xml.Header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
)

// writePackage copies the parts of the saved skeleton skel to w, adding
// the plan sheets (addPlanSheets), their drawings and charts, and writing
// the Chart data sheet and the Sector targets sheet's rows.
func (wb *GridWorkbook) writePackage(w io.Writer, skel []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(skel), int64(len(skel)))
	if err != nil {
		return err
	}
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		parts[f.Name] = f
	}
	sheetParts, book, err := wb.planBook(parts)
	if err != nil {
		return err
	}
	var overrides strings.Builder
	for i, sp := range wb.plans {
		fmt.Fprintf(&overrides, `<Override PartName="/%s" ContentType="%s"></Override>`, book.parts[i], worksheetContentType)
		if sp.drawing > 0 {
			fmt.Fprintf(&overrides, `<Override PartName="/xl/drawings/drawing%d.xml" ContentType="%s"></Override>`, sp.drawing, drawingContentType)
			for k := range sp.charts {
				fmt.Fprintf(&overrides, `<Override PartName="/xl/charts/chart%d.xml" ContentType="%s"></Override>`, sp.chart+k, chartContentType)
			}
		}
	}
	chartData := ""
	if wb.charts != nil {
		p, ok := sheetParts[ChartDataSheet]
		if !ok {
			return fmt.Errorf("sheet %s: not in the workbook", ChartDataSheet)
		}
		chartData = p
	}

	sectorPart := ""
	if wb.sector != nil {
		p, ok := sheetParts[reports.SectorSheetName]
		if !ok {
			return fmt.Errorf("sheet %s: not in the workbook", reports.SectorSheetName)
		}
		sectorPart = p
	}

	zw := xlsx.NewZipWriter(w)
	for _, f := range zr.File {
		var err error
		name := book.part(f.Name)
		switch {
		case f.Name == contentTypesPart:
			err = writeContentTypes(zw, f, book.partRefs, overrides.String())
		case f.Name == workbookPart:
			err = writePart(zw, f.Name, []byte(book.workbook))
		case f.Name == relsPath(workbookPart):
			err = writePart(zw, f.Name, []byte(book.rels))
		case f.Name == sectorPart:
			if err = wb.writeSectorSheet(zw, f, name); err != nil {
				err = fmt.Errorf("sheet %s: %w", reports.SectorSheetName, err)
			}
		case f.Name == chartData:
			err = wb.writeChartData(zw, name)
		case name != f.Name || strings.HasSuffix(f.Name, ".rels"):
			err = renamePart(zw, f, name, book.partRefs)
		default:
			fh := f.FileHeader
			fh.Name = name
			err = copyRaw(zw, f, &fh)
		}
		if err != nil {
			return err
		}
	}
	// The plan sheets' parts, numbered after the sheets before them.
	plan := func(name string) string {
		if m := numberedPart.FindStringSubmatchIndex(name); m != nil && name[m[2]:m[3]] == "sheet" {
			k, _ := strconv.Atoi(name[m[4]:m[5]])
			return name[:m[4]] + strconv.Itoa(k+book.at) + name[m[5]:]
		}
		return name
	}
	if err := wb.parts.WriteTo(zw, plan); err != nil {
		return err
	}
	return zw.Close()
}

// renamePart copies the part f as name, its references to other parts
// renamed by rename (a relationships part) or kept (anything else).
func renamePart(zw *zip.Writer, f *zip.File, name string, rename func(string) string) error {
	if !strings.HasSuffix(f.Name, ".rels") {
		fh := f.FileHeader
		fh.Name = name
		return copyRaw(zw, f, &fh)
	}
	b, err := readPart(f)
	if err != nil {
		return err
	}
	return writePart(zw, name, []byte(rename(string(b))))
}

// workbookPart is the workbook part excelize writes.
const workbookPart = "xl/workbook.xml"

// copyRaw copies the part f as it is compressed, under fh.
func copyRaw(zw *zip.Writer, f *zip.File, fh *zip.FileHeader) error {
	r, err := f.OpenRaw()
	if err != nil {
		return err
	}
	out, err := zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	return err
}

// planBook returns the skeleton's sheets (by name, their worksheet parts
// in the skeleton) and its workbook part with the plan sheets added. A
// sheet added to the File under a plan sheet's name (Excel compares them
// case-insensitively) is refused.
func (wb *GridWorkbook) planBook(parts map[string]*zip.File) (map[string]string, *planBook, error) {
	sheetParts, err := workbookSheets(parts)
	if err != nil {
		return nil, nil, err
	}
	folded := make(map[string]bool, len(sheetParts))
	for name := range sheetParts {
		folded[strings.ToLower(name)] = true
	}
	for _, name := range wb.grid.Names {
		if folded[strings.ToLower(name)] {
			return nil, nil, fmt.Errorf("sheet %s: a sheet of that name was added beside the plan sheet", name)
		}
	}
	x, err := readPart(parts[workbookPart])
	if err != nil {
		return nil, nil, err
	}
	rels, err := readPart(parts[relsPath(workbookPart)])
	if err != nil {
		return nil, nil, err
	}
	book, err := addPlanSheets(string(x), string(rels), wb.grid.Names, wb.grid.At, wb.drawings, wb.chartParts)
	return sheetParts, book, err
}

// writeContentTypes copies the content types part f, its part names
// renamed by rename, with overrides (the new sheets', drawings' and
// charts') added at its end.
func writeContentTypes(zw *zip.Writer, f *zip.File, rename func(string) string, overrides string) error {
	raw, err := readPart(f)
	if err != nil {
		return err
	}
	b := []byte(rename(string(raw)))
	i := bytes.LastIndex(b, []byte("</Types>"))
	if i < 0 {
		return fmt.Errorf("%s: no </Types>", contentTypesPart)
	}
	out, err := zw.Create(f.Name)
	if err != nil {
		return err
	}
	if _, err := out.Write(b[:i]); err != nil {
		return err
	}
	_, err = io.WriteString(out, overrides+string(b[i:]))
	return err
}

// readPart returns a part's bytes; the skeleton is eepipe's own, small.
func readPart(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// relsPath returns the relationships part of a part.
func relsPath(p string) string { return path.Join(path.Dir(p), "_rels", path.Base(p)+".rels") }

// workbookSheets maps each sheet name of the skeleton to its worksheet part.
func workbookSheets(parts map[string]*zip.File) (map[string]string, error) {
	read := func(name string, v any) error {
		f, ok := parts[name]
		if !ok {
			return fmt.Errorf("no %s", name)
		}
		b, err := readPart(f)
		if err != nil {
			return err
		}
		return xml.Unmarshal(b, v)
	}
	var book struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rel []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := read("xl/workbook.xml", &book); err != nil {
		return nil, err
	}
	if err := read("xl/_rels/workbook.xml.rels", &rels); err != nil {
		return nil, err
	}
	targets := map[string]string{}
	for _, r := range rels.Rel {
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = path.Join("xl", t)
		}
		targets[r.ID] = t
	}
	out := map[string]string{}
	for _, s := range book.Sheets {
		out[s.Name] = targets[s.RID]
	}
	return out, nil
}

// createPart starts a deflated part of the package.
func createPart(zw *zip.Writer, name string) (io.Writer, error) {
	return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
}

// writePlanParts writes a plan sheet's worksheet part and, with charts,
// its relationships, drawing and chart parts to set. It runs beside the
// other plan sheets': it only reads the workbook.
func (wb *GridWorkbook) writePlanParts(set *xlsx.ZipPartSet, name string, sp *planSheetPart) error {
	g := wb.grid
	i := sp.plan
	ps := grid.PlanSheetOf(g.Plans[i])
	if g.Opts.Title != "" {
		ps.Title = g.Opts.Title
	}
	rid := ""
	if sp.drawing > 0 {
		rid = "rId1"
		ps.Charts = sp.charts
	}
	if err := templates.WritePlanSheetXML(set.Create(name), ps, g.Cat, g.Styles, rid); err != nil {
		return err
	}
	if sp.drawing == 0 {
		return nil
	}
	charts := wb.charts.Charts(i, len(ps.Grids))
	if len(charts) != sp.charts {
		return fmt.Errorf("%d charts, %d expected", len(charts), sp.charts)
	}
	b := set.Create(relsPath(name))
	b.WriteString(relsHeader)
	fmt.Fprintf(b, `<Relationship Id="rId1" Target="../drawings/drawing%d.xml" Type="%s"></Relationship></Relationships>`, sp.drawing, relDrawing)
	drawing := fmt.Sprintf("xl/drawings/drawing%d.xml", sp.drawing)
	if err := drawingXML(set.Create(drawing), charts, wb.widths); err != nil {
		return err
	}
	b = set.Create(relsPath(drawing))
	b.WriteString(relsHeader)
	for k := range charts {
		fmt.Fprintf(b, `<Relationship Id="rId%d" Target="../charts/chart%d.xml" Type="%s"></Relationship>`, k+1, sp.chart+k, relChart)
	}
	b.WriteString(`</Relationships>`)
	for k, c := range charts {
		chartXML(set.Create(fmt.Sprintf("xl/charts/chart%d.xml", sp.chart+k)), c.Chart)
	}
	return nil
}

func writePart(zw *zip.Writer, name string, b []byte) error {
	out, err := createPart(zw, name)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// writeChartData writes the hidden Chart data sheet's part.
func (wb *GridWorkbook) writeChartData(zw *zip.Writer, name string) error {
	out, err := createPart(zw, name)
	if err != nil {
		return err
	}
	x := templates.NewSheetXML(out)
	x.Raw(xml.Header + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheetData>`)
	for i := range wb.charts.plans {
		for _, r := range wb.charts.Data(i) {
			x.StartRow(r.row)
			for j, v := range r.values {
				if err := x.Cell(j+1, r.row, 0, v); err != nil {
					return err
				}
			}
			x.EndRow()
		}
	}
	x.Raw(`</sheetData></worksheet>`)
	return x.Flush()
}

// emuPerPixel is the English Metric Units of a pixel.
const emuPerPixel = 9525

// drawingXML writes the drawing part of a plan sheet's charts to b: each
// anchored at its cell and spanning its width and height in pixels over
// the sheet's columns and rows, as excelize's AddChart places it.
func drawingXML(b *bytes.Buffer, charts []planChart, widths []float64) error {
	colPx := func(col int) int {
		if col-1 < len(widths) {
			return colPixels(widths[col-1])
		}
		return colPixels(0)
	}
	const rowPx = chartRowPixels
	b.WriteString(xml.Header + `<xdr:wsDr xmlns="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing">`)
	for k, c := range charts {
		col, row, err := excelize.CellNameToCoordinates(c.Cell)
		if err != nil {
			return err
		}
		colIdx, rowIdx := col-1, row-1
		colEnd, rowEnd := colIdx, rowIdx
		x2, y2 := int(c.Chart.Dimension.Width), int(c.Chart.Dimension.Height)
		for x2 >= colPx(colEnd+1) {
			colEnd++
			x2 -= colPx(colEnd)
		}
		for y2 >= rowPx {
			rowEnd++
			y2 -= rowPx
		}
		fmt.Fprintf(b, `<xdr:twoCellAnchor><xdr:from><xdr:col>%d</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>%d</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>`+
			`<xdr:to><xdr:col>%d</xdr:col><xdr:colOff>%d</xdr:colOff><xdr:row>%d</xdr:row><xdr:rowOff>%d</xdr:rowOff></xdr:to>`,
			colIdx, rowIdx, colEnd, x2*emuPerPixel, rowEnd, y2*emuPerPixel)
		fmt.Fprintf(b, `<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="%d" name="Chart %d" descr="`, k+2, k+2)
		_ = xml.EscapeText(b, []byte(c.Chart.Format.AltText))
		fmt.Fprintf(b, `"></xdr:cNvPr><xdr:cNvGraphicFramePr></xdr:cNvGraphicFramePr></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"></a:off><a:ext cx="0" cy="0"></a:ext></xdr:xfrm>`+
			`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rId%d" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"></c:chart></a:graphicData></a:graphic></xdr:graphicFrame>`+
			`<xdr:clientData fLocksWithSheet="true" fPrintsWithSheet="true"></xdr:clientData></xdr:twoCellAnchor>`, k+1)
	}
	b.WriteString(`</xdr:wsDr>`)
	return nil
}

// colPixels is a column of width w (characters; 0: the default) in
// pixels, as excelize's AddChart spans a chart over columns.
func colPixels(w float64) int {
	if w > 0 {
		return int(w*8 + 0.5)
	}
	return 64 // excelize's default column width in pixels
}

// chartXML writes the chart part of one plan chart (see planCharts) to b.
func chartXML(b *bytes.Buffer, c *excelize.Chart) {
	esc := func(s string) { _ = xml.EscapeText(b, []byte(s)) }
	b.WriteString(chartXMLHead)
	if len(c.Title.Paragraph) > 0 {
		esc(c.Title.Paragraph[0].Text)
	}
	b.WriteString(chartXMLTitle)
	for i, s := range c.Series {
		b.WriteString(chartSerStart)
		fmt.Fprintf(b, `<idx val="%d"></idx><order val="%d"></order>`, i, i)
		b.WriteString(chartSerName)
		esc(s.Name)
		b.WriteString(chartSerCat)
		esc(s.Categories)
		b.WriteString(chartSerVal)
		esc(s.Values)
		b.WriteString(chartSerEnd)
	}
	b.WriteString(chartXMLTail)
}

var (
	dimensionElement = regexp.MustCompile(`<dimension [^>]*/>|<dimension [^>]*></dimension>`)
	rowStart         = regexp.MustCompile(`^<row r="(\d+)"[^>]*>`)
	rowSpans         = regexp.MustCompile(` spans="[^"]*"`)
)

// writeSectorSheet writes the Sector targets sheet's part: the part
// excelize wrote (title, header, chart data, formats, filter, page setup,
// drawing) with the data rows (from reports.SectorFirstRow) merged in, row by row,
// their cells before the chart data's (columns A-X, then AA on).
func (wb *GridWorkbook) writeSectorSheet(zw *zip.Writer, f *zip.File, name string) error {
	sx, rows, tail, err := reopenSheet(zw, f, name)
	if err != nil {
		return err
	}
	// theirs returns excelize's next row: its number, its start tag (no
	// spans: they would leave the data cells out), its cells.
	theirs := func() (int, string, string, bool) {
		n, startTag, cells, rest, ok := nextRow(rows)
		rows = rest
		return n, startTag, cells, ok
	}
	tn, tStart, tCells, tOK := theirs()
	// The chart data rows, from column reports.SectorChartCol on: a few per plan,
	// kept (the data rows, many more, are written as they are laid out).
	charts, err := wb.sectorChartRows()
	if err != nil {
		return err
	}
	chartCells := func(row int) error {
		var err error
		charts, err = sectorChartCells(sx, charts, row)
		return err
	}
	// writeRow writes row r: the data cells (columns A-X), excelize's
	// cells, the chart data's.
	writeRow := func(r int, data func() error) error {
		mine := tOK && tn == r
		if mine {
			sx.Raw(tStart)
		} else {
			sx.StartRow(r)
		}
		if data != nil {
			if err := data(); err != nil {
				return err
			}
		}
		if mine {
			sx.Raw(tCells)
			tn, tStart, tCells, tOK = theirs()
		}
		if err := chartCells(r); err != nil {
			return err
		}
		sx.EndRow()
		return nil
	}
	// flushBefore writes the rows before r (0: all) that have no data.
	flushBefore := func(r int) error {
		for {
			next := 0
			if tOK {
				next = tn
			}
			if len(charts) > 0 && (next == 0 || charts[0].row < next) {
				next = charts[0].row
			}
			if next == 0 || (r != 0 && next >= r) {
				return nil
			}
			if err := writeRow(next, nil); err != nil {
				return err
			}
		}
	}
	row := reports.SectorFirstRow
	err = reports.SectorEachRow(wb.sector.Plans, func(vals []any, noYear bool) error {
		if err := flushBefore(row); err != nil {
			return err
		}
		styles := wb.sector.Styles.Columns(noYear)
		err := writeRow(row, func() error {
			for c, v := range vals {
				if err := sx.Cell(c+1, row, styles[c], v); err != nil {
					return err
				}
			}
			return nil
		})
		row++
		return err
	})
	if err != nil {
		return err
	}
	if err := flushBefore(0); err != nil {
		return err
	}
	if rows != "" {
		return fmt.Errorf("rows of the part excelize wrote were not understood")
	}
	sx.Raw("</sheetData>")
	sx.Raw(tail)
	return sx.Flush()
}

// reopenSheet starts writing again, as name, a worksheet part excelize
// wrote: the part up to its rows is written, the rows and what follows
// them are returned.
func reopenSheet(zw *zip.Writer, f *zip.File, name string) (sx *templates.SheetXML, rows, tail string, err error) {
	b, err := readPart(f)
	if err != nil {
		return nil, "", "", err
	}
	head, rows, tail, err := splitSheetData(string(b))
	if err != nil {
		return nil, "", "", err
	}
	// The dimension excelize computed leaves the data rows out; it is
	// optional.
	head = dimensionElement.ReplaceAllString(head, "")
	out, err := createPart(zw, name)
	if err != nil {
		return nil, "", "", err
	}
	sx = templates.NewSheetXML(out)
	sx.Raw(head)
	sx.Raw("<sheetData>")
	return sx, rows, tail, nil
}

// splitSheetData splits a worksheet part excelize wrote around its
// rows: what comes before sheetData, the rows, what comes after.
func splitSheetData(x string) (head, rows, tail string, err error) {
	start := strings.Index(x, "<sheetData>")
	end := strings.LastIndex(x, "</sheetData>")
	empty := strings.Index(x, "<sheetData/>")
	switch {
	case start >= 0 && end > start:
		return x[:start], x[start+len("<sheetData>") : end], x[end+len("</sheetData>"):], nil
	case empty >= 0:
		return x[:empty], "", x[empty+len("<sheetData/>"):], nil
	}
	return "", "", "", fmt.Errorf("no sheetData in the part excelize wrote")
}

// nextRow returns the first of rows excelize wrote: its number, its
// start tag (no spans: they would leave the data cells out), its cells,
// and the rows after it; false (rows given back as they are) when there
// is none or it is not understood.
func nextRow(rows string) (n int, startTag, cells, rest string, ok bool) {
	if rows == "" {
		return 0, "", "", rows, false
	}
	m := rowStart.FindStringSubmatchIndex(rows)
	if m == nil {
		return 0, "", "", rows, false
	}
	n, _ = strconv.Atoi(rows[m[2]:m[3]])
	startTag = rowSpans.ReplaceAllString(rows[:m[1]], "")
	rest = rows[m[1]:]
	if strings.HasSuffix(startTag, "/>") {
		startTag = strings.TrimSuffix(startTag, "/>") + ">"
	} else {
		i := strings.Index(rest, "</row>")
		if i < 0 {
			return 0, "", "", rows, false
		}
		cells, rest = rest[:i], rest[i+len("</row>"):]
	}
	return n, startTag, cells, rest, true
}

// sectorChartRows are the Sector targets sheet's chart data rows, from
// column reports.SectorChartCol on: a few per plan, kept (the data rows,
// many more, are written as they are laid out). None without charts.
func (wb *GridWorkbook) sectorChartRows() ([]sectorChartRow, error) {
	var charts []sectorChartRow
	if !wb.sector.Charts {
		return nil, nil
	}
	err := reports.AddSectorCharts(nil, reports.SectorSheetName, wb.sector.Plans, &templates.Styles{Heading: wb.sector.Heading}, reports.SectorChartStream,
		func(row int, vals []any, style int) error {
			charts = append(charts, sectorChartRow{row, append([]any(nil), vals...), style})
			return nil
		})
	return charts, err
}

// sectorChartCells writes the chart data cells of row (the first of charts,
// in row order) and returns the chart rows after it.
func sectorChartCells(sx *templates.SheetXML, charts []sectorChartRow, row int) ([]sectorChartRow, error) {
	for len(charts) > 0 && charts[0].row == row {
		c := charts[0]
		for i, v := range c.vals {
			style := 0
			if i == 0 {
				style = c.style
			}
			if v == nil && style == 0 {
				continue
			}
			if err := sx.Cell(reports.SectorChartCol+i, row, style, v); err != nil {
				return charts, err
			}
		}
		charts = charts[1:]
	}
	return charts, nil
}

// sectorChartRow is a row of the Sector targets sheet's chart data.
type sectorChartRow struct {
	row   int
	vals  []any
	style int
}
