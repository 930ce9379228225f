#!/usr/bin/python3
"""Generates the fixtures of South African shapes (sa_*): what consultants'
templates, XlsxWriter-based exports, LibreOffice and Excel on South African
regional settings write.

  - sa_lo_check_column: a grid (openpyxl, re-saved and so calculated by
    LibreOffice) with a hidden check column right of Total holding
    =IF(L11>=0,"ok","check"), a visible column with a text note, and one
    number in a column without a header (still an error).
  - sa_xw_stale: XlsxWriter flat table with counter formulas (=G2+2):
    XlsxWriter stores 0 as each result and sets fullCalcOnLoad; the same
    sheet calculated by LibreOffice (sa_lo_stale) holds the real results.
  - sa_xw_grid: the same template written by XlsxWriter: the check
    column's results are placeholders declared as text ("ok"), and one
    counter is a formula (no saved result: an error).
  - sa_op_black_african / sa_op_black: a race header "Black African" (the
    Stats SA wording), and "Black" alone (African, Coloured and Indian in
    B-BBEE: never African).
  - sa_op_forms: a grid plan with a yyyy/mm/dd start date, a written-out
    end date, titles carrying date ranges and qualifiers, FY2028, counters
    typed as text with space, no-break space, narrow no-break space and
    thin space grouping, and a counter "12 " typed as text in a row whose
    Total disagrees.
  - sa_excel.csv: an Excel CSV from a PC on South African regional
    settings (BOM, CRLF, ';', no-break-space grouping, yyyy/mm/dd dates),
    written byte by byte as Excel writes it.
  - sa_xw_table_totals / sa_op_table_totals: a flat table as an Excel table
    (ListObject) with its Total Row switched on.
  - sa_op_hidden_only / sa_op_hidden_versions: the only grid plan sheet
    hidden; a visible plan with two hidden older versions.

Run once from this folder: /usr/bin/python3 make_sa.py (needs
python3-openpyxl, python3-xlsxwriter and soffice). The outputs are
committed; the Go test (formats/sa_shapes_test.go) never needs Python or
LibreOffice.
"""
import datetime
import os
import shutil
import subprocess
import tempfile

import openpyxl
import xlsxwriter
from openpyxl.worksheet.table import Table, TableStyleInfo

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

LEVELS = ["Top management", "Senior management",
          "Professionally qualified and experienced specialists and mid-management",
          "Skilled technical and academically qualified workers, junior management, supervisors, foremen, and superintendents",
          "Semi-skilled and discretionary decision making", "Unskilled and defined decision making",
          "Total permanent", "Temporary employees", "Grand total"]
RACES = ["African", "Coloured", "Indian", "White", "Foreign nationals"]


def value(l, r, g):
    """Counter of level l, race r, gender g (totals rows sum the levels)."""
    if l < 6:
        return 1 + l + 2 * r + g
    perm = sum(value(k, r, g) for k in range(6))
    return {6: perm, 7: 3 + r + g, 8: perm + 3 + r + g}[l]


def meta(ws, name, start, end):
    ws["A1"] = "EMPLOYMENT EQUITY PLAN"
    rows = [("Plan name:", name), ("Company registration number:", "2009/012345/07"),
            ("Start date:", start), ("End date:", end)]
    for i, (lab, v) in enumerate(rows):
        ws.cell(row=3 + i, column=1, value=lab)
        c = ws.cell(row=3 + i, column=2, value=v)
        if isinstance(v, datetime.date):
            c.number_format = "yyyy/mm/dd"


def grid(ws, top, title, races=RACES, cell=None):
    """A grid with its title at A{top}: races merged over Male/Female in
    B..K, Total in L, level rows from top+3. cell(l, k) may replace a
    counter's value (k = column offset 0..9). Returns the next free row."""
    ws.cell(row=top, column=1, value=title)
    ws.cell(row=top + 1, column=1, value="Occupational level")
    for i, rn in enumerate(races):
        c = 2 + 2 * i
        ws.cell(row=top + 1, column=c, value=rn)
        ws.merge_cells(start_row=top + 1, start_column=c, end_row=top + 1, end_column=c + 1)
        ws.cell(row=top + 2, column=c, value="Male")
        ws.cell(row=top + 2, column=c + 1, value="Female")
    ws.cell(row=top + 1, column=12, value="Total")
    for l, lv in enumerate(LEVELS):
        row = top + 3 + l
        ws.cell(row=row, column=1, value=lv)
        s = 0
        for k in range(10):
            v = value(l, k // 2, k % 2)
            s += v
            if cell is not None:
                v = cell(l, k, v)
            ws.cell(row=row, column=2 + k, value=v)
        ws.cell(row=row, column=12, value=s)
    return top + 3 + len(LEVELS) + 2


def soffice_resave(src, out):
    tmp = tempfile.mkdtemp()
    subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                    os.path.abspath(src)], check=True, capture_output=True, timeout=180)
    shutil.copy(os.path.join(tmp, os.path.basename(src)), out)
    shutil.rmtree(tmp)


def check_column():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Plan"
    meta(ws, "Check column plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31))
    grid(ws, 8, "Year 1 - 2026/27 - All employees")
    for row in range(11, 20):
        ws.cell(row=row, column=13, value='=IF(L%d>=0,"ok","check")' % row)  # M: hidden check column
    ws.column_dimensions["M"].hidden = True
    ws.cell(row=12, column=14, value="see note")   # N12: a visible note
    ws.cell(row=14, column=14, value="checked")    # N14
    ws.cell(row=15, column=15, value=7)            # O15: a number, could be a counter
    tmp = tempfile.mkdtemp()
    src = os.path.join(tmp, "sa_lo_check_column.xlsx")
    wb.save(src)
    soffice_resave(src, "sa_lo_check_column.xlsx")
    shutil.rmtree(tmp)


def xw_grid():
    """The check-column template as XlsxWriter writes it: Total and check
    formulas with placeholder results (the check column's declared as text,
    "ok"), fullCalcOnLoad set, and one counter typed as a formula."""
    wb = xlsxwriter.Workbook("sa_xw_grid.xlsx")
    ws = wb.add_worksheet("Plan")
    ws.write("A1", "EMPLOYMENT EQUITY PLAN")
    for i, (lab, v) in enumerate([("Plan name:", "XlsxWriter plan"), ("Company registration number:", "2009/012345/07"),
                                  ("Start date:", "2026-09-01"), ("End date:", "2029-08-31")]):
        ws.write(2 + i, 0, lab)
        ws.write_string(2 + i, 1, v)
    top = 7  # 0-based row of the title (A8)
    ws.write(top, 0, "Year 1 - 2026/27 - All employees")
    ws.write(top + 1, 0, "Occupational level")
    for i, rn in enumerate(RACES):
        ws.merge_range(top + 1, 1 + 2 * i, top + 1, 2 + 2 * i, rn)
        ws.write(top + 2, 1 + 2 * i, "Male")
        ws.write(top + 2, 2 + 2 * i, "Female")
    ws.write(top + 1, 11, "Total")
    for l, lv in enumerate(LEVELS):
        r = top + 3 + l
        ws.write(r, 0, lv)
        for k in range(10):
            if (l, k) == (2, 0):
                ws.write_formula(r, 1 + k, "=1+%d" % (value(l, 0, 0) - 1))  # B13: a counter as a formula
            else:
                ws.write_number(r, 1 + k, value(l, k // 2, k % 2))
        ws.write_formula(r, 11, "=SUM(B%d:K%d)" % (r + 1, r + 1))
        ws.write_formula(r, 12, '=IF(L%d>=0,"ok","check")' % (r + 1), None, "ok")
    ws.set_column(12, 12, None, None, {"hidden": True})
    wb.close()


FLAT = ["plan_name", "company_registration_number", "start_date", "end_date", "year_number", "target_type",
        "number_of_african_male_top_managers", "number_of_white_female_unskilled_employees"]


def stale():
    wb = xlsxwriter.Workbook("sa_xw_stale.xlsx")
    ws = wb.add_worksheet("Targets")
    ws.write_row(0, 0, FLAT)
    ws.write_row(1, 0, ["Stale plan", "2009/012345/07", "2026-09-01", "2029-08-31", 1, "all_employees"])
    ws.write_number(1, 6, 3)
    ws.write_formula(1, 7, "=G2+2")       # H2: Excel shows 5, XlsxWriter stores 0
    ws.write_row(2, 0, ["Stale plan", "2009/012345/07", "2026-09-01", "2029-08-31", 2, "all_employees"])
    ws.write_formula(2, 6, "=SUM(G2:H2)")  # G3: Excel shows 8
    ws.write_number(2, 7, 4)
    wb.close()
    # LibreOffice keeps XlsxWriter's zeros when it re-saves that file (it
    # does not recalculate on load, and drops fullCalcOnLoad): the
    # calculated copy is the same sheet written by openpyxl (formulas
    # without results), which LibreOffice calculates when it saves.
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    ws.append(FLAT)
    ws.append(["Stale plan", "2009/012345/07", "2026-09-01", "2029-08-31", 1, "all_employees", 3, "=G2+2"])
    ws.append(["Stale plan", "2009/012345/07", "2026-09-01", "2029-08-31", 2, "all_employees", "=SUM(G2:H2)", 4])
    tmp = tempfile.mkdtemp()
    src = os.path.join(tmp, "sa_lo_stale.xlsx")
    wb.save(src)
    soffice_resave(src, "sa_lo_stale.xlsx")
    shutil.rmtree(tmp)


def black():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Plan"
    meta(ws, "Black African plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31))
    grid(ws, 8, "Year 1 - 2026/27 - All employees", races=["Black African"] + RACES[1:])
    wb.save("sa_op_black_african.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Plan"
    meta(ws, "Black plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31))
    grid(ws, 8, "Year 1 - 2026/27 - All employees", races=["Black"] + RACES[1:])
    wb.save("sa_op_black.xlsx")


NBSP, NNBSP, THIN = "\u00a0", "\u202f", "\u2009"


def forms():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "SA plan"
    meta(ws, "SA forms plan", "2026/09/01", "31 August 2029")

    def big(l, k, v):
        # Top management row: thousands grouped four ways, as text.
        return {0: "1 234", 1: "1" + NBSP + "234", 2: "2" + NNBSP + "345", 3: "12" + THIN + "000"}.get(k, v) if l == 0 else v

    r = grid(ws, 8, "Year 1 (01/09/2026 – 31/08/2027): all employees", cell=big)
    # Top-management Total (L11) is left as the sum of the small values: a
    # warning names it, as the counters are read as numbers.

    def text12(l, k, v):
        # Senior management, African male typed as text "12 " (value is 4);
        # the Total (L) of that row then disagrees by 8.
        return "12 " if (l, k) == (1, 0) else v

    r = grid(ws, r, "Year 1 (01/09/2026 – 31/08/2027): Employees with disabilities (all sites)", cell=text12)
    r = grid(ws, r, "FY2028 All employees")
    grid(ws, r, "FY2028 Employees with disabilities")
    wb.save("sa_op_forms.xlsx")


def excel_csv():
    rows = [FLAT]
    rows.append(["SA CSV plan", "2009/012345/07", "2026/09/01", "2029/08/31", "1", "all_employees", "1" + NBSP + "234", "7"])
    rows.append(["SA CSV plan", "2009/012345/07", "2026/09/01", "2029/08/31", "2", "all_employees", "1,234", "7"])
    rows.append(["SA CSV plan", "2009/012345/07", "2026/09/01", "2029/08/31", "3", "all_employees", "1" + NBSP + "234,5", "12"])
    rows.append(["Written plan", "2009/012345/07", "1 September 2026", "31 August 2029", "1", "all_employees", "5", "6"])
    rows.append(["Short plan", "2009/012345/07", "01 Sep 2026", "31 Aug 2029", "1", "all_employees", "5", "6"])
    with open("sa_excel.csv", "wb") as f:
        f.write(b"\xef\xbb\xbf")
        for row in rows:
            f.write((";".join(row) + "\r\n").encode("utf-8"))


def table_totals():
    wb = xlsxwriter.Workbook("sa_xw_table_totals.xlsx")
    ws = wb.add_worksheet("Targets")
    data = [["Table plan", "2009/012345/07", "2026-09-01", "2029-08-31", y, "all_employees", 3 + y, 2 * y]
            for y in (1, 2, 3)]
    ws.add_table(0, 0, len(data) + 1, len(FLAT) - 1, {
        "data": data, "total_row": True,
        "columns": [{"header": h} for h in FLAT[:5]] + [{"header": FLAT[5], "total_string": "Total"}] +
                   [{"header": h, "total_function": "sum"} for h in FLAT[6:]],
    })
    wb.close()

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    ws.append(FLAT)
    for y in (1, 2, 3):
        ws.append(["Table plan", "2009/012345/07", "2026-09-01", "2029-08-31", y, "all_employees", 3 + y, 2 * y])
    ws.append(["Total", None, None, None, None, None, "=SUBTOTAL(109,Table1[number_of_african_male_top_managers])",
               "=SUBTOTAL(109,Table1[number_of_white_female_unskilled_employees])"])
    t = Table(displayName="Table1", ref="A1:H5", totalsRowCount=1)
    t.tableStyleInfo = TableStyleInfo(name="TableStyleMedium9", showRowStripes=True)
    ws.add_table(t)
    wb.save("sa_op_table_totals.xlsx")


def hidden():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Instructions"
    ws["A1"] = "Fill in the plan on the next sheet."
    plan = wb.create_sheet("Plan 2026")
    meta(plan, "Hidden plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31))
    grid(plan, 8, "Year 1 - 2026/27 - All employees")
    plan.sheet_state = "hidden"
    wb.save("sa_op_hidden_only.xlsx")

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Plan"
    meta(ws, "Current plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31))
    grid(ws, 8, "Year 1 - 2026/27 - All employees")
    for name in ("Plan v1", "Plan v2"):
        old = wb.create_sheet(name)
        meta(old, "Current plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31))
        grid(old, 8, "Year 1 - 2026/27 - All employees")
        old.sheet_state = "hidden"
    wb.save("sa_op_hidden_versions.xlsx")


if __name__ == "__main__":
    check_column()
    xw_grid()
    stale()
    black()
    forms()
    excel_csv()
    table_totals()
    hidden()
