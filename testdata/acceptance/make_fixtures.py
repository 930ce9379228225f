#!/usr/bin/python3
"""Generates the acceptance fixtures of testdata/acceptance with programs other
than excelize (openpyxl, LibreOffice, plain Python for CSV). Run once from this
folder: /usr/bin/python3 make_fixtures.py. The outputs are committed; the Go
tests never need Python or LibreOffice."""
import datetime, os, shutil, subprocess, tempfile
import openpyxl
from openpyxl.styles import PatternFill
from openpyxl.comments import Comment

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

H = ["company_vat_number", "company_registration_number", "company_id_number", "plan_id",
     "plan_name", "start_date", "end_date", "sector", "scorecard_id", "year_number",
     "financial_year", "target_type"]
C1 = "number_of_african_male_top_managers"
C2 = "number_of_white_female_unskilled_employees"
C3 = "number_of_indian_female_senior_managers"


def soffice_convert(src, fmt, outdir):
    subprocess.run(["soffice", "--headless", "--convert-to", fmt, "--outdir", outdir, src],
                   check=True, capture_output=True, timeout=180)


# 1. Table on a sheet not named Targets, a hidden sheet with another table
#    before it, title rows, header on row 5 in odd case with spaces, columns in
#    random order.
def hidden_then_data():
    wb = openpyxl.Workbook()
    hid = wb.active
    hid.title = "Old"
    hid.append(["target_type", "plan_name", "number_of_bogus"])
    hid.append(["nonsense", "x", -5])
    hid.sheet_state = "hidden"
    ws = wb.create_sheet("Client data")
    ws["A1"] = "Acme Foods EE targets"
    ws["A2"] = "Prepared by the consultant"
    ws["A3"] = "target_type is in column D below"  # not exactly target_type
    hdr = ["  Plan_Name ", C1.upper(), "Financial_Year", " TARGET_TYPE", "Start_Date ",
           "END_DATE", "Company_VAT_Number", "Sector", C2]
    for i, h in enumerate(hdr, 1):
        ws.cell(row=5, column=i, value=h)
    rows = [
        ["Acme plan", 10, "2026/27", "all_employees", "2026-09-01", "2029-08-31", "4012345678", "Manufacturing", 3],
        ["Acme plan", 1, "2026/2027", "disabled_employees", "2026-09-01", "2029-08-31", "4012345678", "Manufacturing", 0],
        ["Acme plan", 12, "2027/28", "All_Employees", "2026-09-01", "2029-08-31", "4012345678", "Manufacturing", None],
    ]
    for r, row in enumerate(rows, 6):
        for c, v in enumerate(row, 1):
            ws.cell(row=r, column=c, value=v)
    wb.save("op_hidden_then_data.xlsx")


# 2. 1904 date system, dates as real date cells in several number formats.
def date1904():
    wb = openpyxl.Workbook()
    wb.epoch = openpyxl.utils.datetime.CALENDAR_MAC_1904
    ws = wb.active
    ws.title = "Targets"
    ws.append(H + [C1])
    rows = [
        [None, None, None, None, "Mac plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31), None, None, 1, None, "all_employees", 4],
        [None, None, None, None, "Mac plan", datetime.date(2026, 9, 1), datetime.date(2029, 8, 31), None, None, 2, None, "all_employees", 5],
    ]
    for row in rows:
        ws.append(row)
    ws["F2"].number_format = "dd/mm/yyyy"
    ws["G2"].number_format = "d mmmm yyyy"
    ws["F3"].number_format = "mm/dd/yy"
    ws["G3"].number_format = "yyyy-mm-dd"
    wb.save("op_date1904.xlsx")


# 3. Every value kind, one problem per row, so each problem has its own cell.
def values():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    hdr = H + [C1, C2, "Comment", "number_of_african_male_top_manager"]
    ws.append(hdr)
    base = lambda yr, tt: ["4012345678", "2009/012345/07", None, None, "Values plan", "2026-09-01", "2031-08-31", "manufacturing", None, yr, None, tt]
    # row 2: good counters: number, padded text, 12.0 text
    ws.append(base(1, "all_employees") + [12, " 12 ", "note", None])
    # row 3: good: text 12.0 and float 7.0
    ws.append(base(1, "disabled_employees") + ["12.0", 7.0, None, None])
    # row 4: negative (E? col M) and fractional (col N)
    ws.append(base(2, "all_employees") + [-3, 1.5, None, None])
    # row 5: text not a number, and #DIV/0! error cell
    ws.append(base(2, "disabled_employees") + ["abc", "#DIV/0!", None, None])
    # row 6: formula without cached value (openpyxl writes no cache)
    ws.append(base(3, "all_employees") + ["=2*6", None, None, None])
    wb.save("op_values.xlsx")


# 4. Identifiers: VAT as a number with a zero-padding format, VAT as text with a
#    leading zero, registration numbers with slashes; financial year forms;
#    sector lower-case and misspelt; ambiguous date text.
def identifiers():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    ws.append(H + [C1])
    ws.append([412345678, "2015/123456/07", None, None, "Padded", "2026-09-01", "2029-08-31", "construction", None, None, "2026/27", "all_employees", 1])
    ws["A2"].number_format = "0000000000"
    ws.append(["0412345678", "2015/123456/07", None, None, "Texted", "2026-09-01", "2029-08-31", "Construction", None, None, "2026/2027", "all_employees", 1])
    ws.append(["0412345678", "2015/123456/07", None, None, "Texted", "2026-09-01", "2029-08-31", "Construction", None, None, "2026/28", "disabled_employees", 1])
    ws.append(["4098765432", None, None, None, "Misspelt", "2026-09-01", "2029-08-31", "Manufacturng", None, 1, None, "all_employees", 1])
    ws.append(["4098765432", None, None, None, "Ambiguous", "03/04/2026", "2029-08-31", None, None, 1, None, "all_employees", 1])
    wb.save("op_identifiers.xlsx")


# 5. Duplicates, conflicts, blank rows in the middle, trailing formatted rows.
def dup_conflict():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    ws.append(H + [C1])
    ws.append([None, None, None, 7, "P7", None, None, "Construction", None, 1, None, "all_employees", 1])  # row 2
    ws.append([None] * 13)  # row 3 blank
    ws.append([None, None, None, 7, "P7", None, None, "Education", None, 2, None, "all_employees", 2])  # row 4 conflict
    ws.append([None, None, None, 7, "P7", None, None, "Construction", None, 1, None, "all_employees", 3])  # row 5 dup of row 2
    fill = PatternFill("solid", fgColor="FFFF00")
    for r in range(6, 40):
        for c in range(1, 14):
            ws.cell(row=r, column=c).fill = fill
    wb.save("op_dup_conflict.xlsx")


# 6. Formulas computed by LibreOffice (cached values), incl. #DIV/0! and text.
def lo_formulas():
    tmp = tempfile.mkdtemp()
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    ws.append(H + [C1, C2, C3])
    b = lambda yr: [None, None, None, 9, None, None, None, None, None, yr, None, "all_employees"]
    ws.append(b(1) + ["=2*6", "=1/0", "=N2-3"])       # row 2: 12, #DIV/0!, 9
    ws.append(b(2) + ["=ROUND(7/2,1)", '="1"&"2"', "=0-4"])  # row 3: 3.5, "12" text, -4
    src = os.path.join(tmp, "lo_formulas.xlsx")
    wb.save(src)
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    soffice_convert(src, "xlsx:Calc MS Excel 2007 XML", out)
    shutil.copy(os.path.join(out, "lo_formulas.xlsx"), "lo_formulas.xlsx")


# 7. CSVs written by hand.
def csvs():
    hdr = ["plan_id", "year_number", "target_type", C1, "plan_name"]
    with open("bom_semicolon_crlf.csv", "wb") as f:
        f.write("\ufeff".encode())
        f.write((";".join(hdr) + "\r\n").encode())
        f.write('7;1;all_employees;5;"Plan; with semicolon"\r\n'.encode())
        f.write('7;2;all_employees; 6 ;"Plan; with semicolon"\r\n'.encode())
        f.write("\r\n".encode())
        f.write('7;3;all_employees;-1;"Plan; with semicolon"\r\n'.encode())
    with open("tab_multiline.csv", "w", newline="") as f:
        f.write("\t".join(hdr) + "\n")
        f.write('8\t1\tall_employees\t5\t"two\nlines"\n')
        f.write('8\t2\tall_employees\tx\t"two\nlines"\n')
        f.write('8\t3\tall_employees\t7\t"two\nlines"\n')
    with open("comma_quoted.csv", "w", newline="") as f:
        f.write(",".join(["plan_name", "start_date", "end_date", "year_number", "target_type", C1, "sector"]) + "\r\n")
        f.write('"Quoted, plan",2026-09-01,2029-08-31,1,all_employees,3,"Agriculture, Forestry & Fishing"\r\n')
        f.write('"Quoted, plan",2026-09-01,2029-08-31,2,all_employees,1.5,"Agriculture, Forestry & Fishing"\r\n')
        f.write('"Quoted, plan",2026-09-01,2029-08-31,9,all_employees,3,"Agriculture, Forestry & Fishing"\r\n')


# 8. Grid workbook in the layout of the grid note, with an extra inserted row
#    and a block moved to the right.
RACES = [("African", "african"), ("Coloured", "coloured"), ("Indian", "indian"), ("White", "white"), ("Foreign nationals", "foreign")]
LEVELS = ["Top management", "Senior management", "Professionally qualified / middle management",
          "Skilled technical / junior management", "Semi-skilled", "Unskilled", "Total permanent",
          "Temporary employees", "Grand total"]


def grid_block(ws, top, left, label, values):
    ws.cell(row=top, column=left, value=label)
    ws.cell(row=top + 1, column=left, value="Occupational level")
    for i, (rn, _) in enumerate(RACES):
        c = left + 1 + 2 * i
        ws.cell(row=top + 1, column=c, value=rn)
        ws.merge_cells(start_row=top + 1, start_column=c, end_row=top + 1, end_column=c + 1)
        ws.cell(row=top + 2, column=c, value="Male")
        ws.cell(row=top + 2, column=c + 1, value="Female")
    for j, lv in enumerate(LEVELS):
        ws.cell(row=top + 3 + j, column=left, value=lv)
    for (j, k), v in values.items():
        ws.cell(row=top + 3 + j, column=left + 1 + k, value=v)


def grid():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Acme 2026"
    ws["A1"] = "Employment Equity plan targets"
    meta = [("Plan name", "Grid plan"), ("Company VAT number", "0412345678"),
            ("Company registration number", "2009/012345/07"), ("Start date", datetime.date(2026, 9, 1)),
            ("End date:", datetime.date(2029, 8, 31)), ("SECTOR", "Manufacturing"), ("Scorecard ID", None)]
    r = 3
    for lab, v in meta:
        ws.cell(row=r, column=1, value=lab)
        if lab == "Plan name":
            r += 1
            ws.cell(row=r, column=1, value="(inserted note row)")
        ws.cell(row=r - (1 if lab == "Plan name" else 0), column=2, value=v)
        r += 1
    ws["B4"].number_format = "yyyy-mm-dd"
    # Block 1 at A14, year 1 all employees: top managers african male 3, female 2
    grid_block(ws, 14, 1, "Year 1 — 2026/27 — All employees", {(0, 0): 3, (0, 1): 2, (5, 9): 4})
    # Block 2 moved right to column N, disabled, year 1; level row misspelt
    grid_block(ws, 14, 14, "Year 1 - Employees with disabilities", {(0, 0): 1, (1, 3): -2})
    ws.cell(row=18, column=14, value="Senior managment")  # misspelt level label
    wb.save("op_grid.xlsx")


def broken():
    with open("empty.xlsx", "wb"):
        pass
    with open("op_values.xlsx", "rb") as f:
        data = f.read()
    with open("truncated.xlsx", "wb") as f:
        f.write(data[: len(data) // 2])
    # an old .xls (BIFF) written by LibreOffice, renamed .xlsx
    tmp = tempfile.mkdtemp()
    soffice_convert(os.path.abspath("op_values.xlsx"), "xls", tmp)
    shutil.copy(os.path.join(tmp, "op_values.xls"), "xls_renamed.xlsx")
    # (password-protected workbooks: testdata/bad/encrypted.xlsx; neither
    # LibreOffice 7.4 headless nor msoffcrypto-tool 5 can encrypt here)


# 9. Grid headers whose FIRST race is misspelt: separate race/gender rows and
#    combined headers. The counters under them must not vanish silently.
def grid_misspelt_first_race():
    for name, races, combined in [("op_grid_first_race_misspelt.xlsx", ["Afican", "Coloured", "Indian", "White", "Foreign National"], False),
                                  ("op_grid_first_combined_misspelt.xlsx", ["Afican male", "African female", "Coloured male"], True)]:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "P"
        ws["A1"] = "Plan ID"
        ws["B1"] = 7
        ws["A3"] = "Year 2 - All employees"
        ws["A4"] = "Occupational level"
        if combined:
            for i, r in enumerate(races):
                ws.cell(row=4, column=2 + i, value=r)
            ws["A5"] = "Top management"
            ws["B5"], ws["C5"], ws["D5"] = 1, 2, 3
        else:
            for i, r in enumerate(races):
                ws.cell(row=4, column=2 + 2 * i, value=r)
                ws.cell(row=5, column=2 + 2 * i, value="Male")
                ws.cell(row=5, column=3 + 2 * i, value="Female")
            ws["A6"] = "Top management"
            ws["B6"], ws["D6"], ws["K6"] = 1, 1, 5
        wb.save(name)


# 10. Number formats on numeric cells: thousands separators, scientific,
#     percent, text format on a number, a date cell in a counter column.
def number_formats():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    t = wb.create_sheet("Targets")
    t.append(["plan_id", "company_vat_number", "company_id_number", "year_number", "target_type", C1,
              "number_of_white_male_top_managers", "number_of_indian_male_top_managers"])
    t.append([4711, 4012345678, 8001015009087, 1, "all_employees", 1200, 12, 0.12])
    t["A2"].number_format = "#,##0"
    t["B2"].number_format = "0.00E+00"
    t["C2"].number_format = "@"
    t["D2"].number_format = "0.00"
    t["F2"].number_format = "#,##0"
    t["G2"].number_format = "0%"
    t["H2"].number_format = "0%"
    t.append([4711, "4012345678", "8001015009087", 2, "all_employees", datetime.date(2026, 1, 1), 5, None])
    t["F3"].number_format = "yyyy-mm-dd"
    t.append([4711, "4012345678", "8001015009087", 3, "all_employees", 1234567, None, None])
    t["F4"].number_format = '0.0,,"M"'
    wb.save("op_number_formats.xlsx")


# 11. A CSV with classic-Mac CR-only line ends (Excel for Mac's "CSV
#     (Macintosh)"): three records, one with a negative counter.
def cr_only():
    with open("cr_only.csv", "wb") as f:
        f.write(("plan_id,year_number,target_type," + C1 + "\r7,1,all_employees,5\r7,2,all_employees,6\r7,3,all_employees,-1\r").encode())


# 12. eepipe's own grid template re-saved by LibreOffice, then filled in by
#     openpyxl: a second plan on a copied sheet with two inserted rows.
def lo_template_filled():
    tmp = tempfile.mkdtemp()
    tpl = os.path.join(tmp, "tpl.xlsx")
    subprocess.run(["go", "run", "./cmd/eepipe", "template", "-o", tpl, "--years", "3", "--start", "2026-09-01"],
                   cwd=os.path.join(HERE, "..", ".."), check=True, capture_output=True, timeout=600)
    out = os.path.join(tmp, "lo")
    os.mkdir(out)
    soffice_convert(tpl, "xlsx:Calc MS Excel 2007 XML", out)
    wb = openpyxl.load_workbook(os.path.join(out, "tpl.xlsx"))
    ws = wb["Plan"]
    ws.title = "Acme"
    ws["B5"] = "Filled plan"
    ws["B6"] = "0412345678"
    ws["B11"] = "Manufacturing"
    ws["B17"], ws["C17"], ws["K25"], ws["B30"] = 3, 2, 40, 1
    ws2 = wb.copy_worksheet(ws)
    ws2.title = "Blue"
    ws2["B5"] = "Second plan"
    ws2["B6"] = 4098765432
    ws2["B17"], ws2["C17"], ws2["D17"] = 5, "7", -1
    ws2.insert_rows(13, 2)
    wb.save("lo_template_filled.xlsx")


# 13. Grid metadata labels merged across two cells (A:B) with the value in
#     column C, and a race header merged over its genders: a cell covered by
#     a merged range shows nothing of its own.
def grid_merged_labels():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Merged"
    meta = [("Plan name", "Merged plan"), ("Company VAT number", "0412345678"),
            ("Start date", "2026-09-01"), ("End date", "2029-08-31"), ("Sector", "Education")]
    for i, (lab, v) in enumerate(meta, 2):
        ws.cell(row=i, column=1, value=lab)
        ws.merge_cells(start_row=i, start_column=1, end_row=i, end_column=2)
        ws.cell(row=i, column=3, value=v)
    grid_block(ws, 9, 1, "Year 1 — 2026/27 — All employees", {(0, 0): 6, (8, 9): 11})
    wb.save("op_grid_merged_labels.xlsx")


# 14. Counter headers that are counter names with spaces or hyphens for the
#     underscores, or a missing underscore after "number": they do not start
#     with "number_of_" literally, so today they are warnings and the values
#     are dropped with exit 0.
def counter_header_variants():
    with open("counter_header_variants.csv", "w", newline="") as f:
        f.write("plan_id,year_number,target_type,number of african male top managers,"
                "number-of-white-male-top-managers,numberof_indian_male_top_managers\n")
        f.write("7,1,all_employees,5,6,7\n")


# 15. A workbook with a flat Targets sheet AND a grid plan sheet (the grid of
#     op_grid.xlsx): only one layout is read, and the other must not vanish
#     silently.
def mixed_flat_and_grid():
    wb = openpyxl.load_workbook("op_grid.xlsx")
    t = wb.create_sheet("Targets")
    t.append(["plan_id", "year_number", "target_type", C1])
    t.append([7, 1, "all_employees", 5])
    wb.save("mixed_flat_and_grid.xlsx")


if __name__ == "__main__":
    hidden_then_data()
    date1904()
    values()
    identifiers()
    dup_conflict()
    lo_formulas()
    csvs()
    grid()
    broken()
    grid_misspelt_first_race()
    number_formats()
    cr_only()
    lo_template_filled()
    grid_merged_labels()
    counter_header_variants()
    mixed_flat_and_grid()
