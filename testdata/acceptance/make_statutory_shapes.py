#!/usr/bin/python3
"""Generates the second set of statutory-layout fixtures (rv_*), in shapes
the first set (make_statutory.py) does not have:

  - rv_eea2_offset: form EEA2 as a consultant pastes it: a report heading,
    the metadata with real date cells, the table starting in column C,
    merged group headers (Male / Female over A C I W, Foreign Nationals
    over Male / Female, Total merged down), the official level wordings
    (with and without the comma before "and superintendents"), EEA13 style
    titles ("... all employees, including people with disabilities" and
    "... people with disabilities only"), a counter written as text "12",
    blank counters (leave as is).
  - rv_eea2_stray: the same table with cells planted in the rows, in
    columns the grid does not map: a number right of Total, a note "n/a",
    a number written as text "12 ", the word "twelve", a number in the
    column between Female W and Foreign Nationals; a 03/04/2026 start date
    (ambiguous) and a 31/08/2029 end date (not ambiguous, not ISO).
  - rv_slash_variants: races over genders written out, the level names with
    slashes and commas ("Professionally qualified/experienced specialists/
    mid-management", "Skilled technical, academically qualified workers,
    junior management, supervisors, foremen, superintendents", ...).

Each is written by openpyxl (rv_op_*) and re-saved by LibreOffice
(rv_lo_*). Run once from this folder: /usr/bin/python3 make_statutory_shapes.py (needs
python3-openpyxl and soffice). The outputs are committed; the Go test
(formats/statutory_shapes_test.go) never needs Python or LibreOffice.

Counter values follow make_statutory.py's formula (statutoryValue in
formats/statutory_test.go), except the cells named in the test.
"""
import datetime
import os
import shutil
import subprocess
import tempfile

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

LEVELS_OFFICIAL = [
    "Top management",
    "Senior management",
    "Professionally qualified and experienced specialists and mid-management",
    "Skilled technical and academically qualified workers, junior management, supervisors, foremen, and superintendents",
    "Semi-skilled and discretionary decision making",
    "Unskilled and defined decision making",
    "TOTAL PERMANENT",
    "Temporary employees",
    "GRAND TOTAL",
]
LEVELS_NO_OXFORD = [
    "Top Management ",
    " Senior Management",
    "Professionally qualified and experienced specialists and mid-management",
    "Skilled technical and academically qualified workers, junior management, supervisors, foremen and superintendents",
    "Semi-skilled and discretionary decision making",
    "Unskilled and defined decision making",
    "Total permanent",
    "Temporary employees",
    "Grand total",
]
LEVELS_SLASH = [
    "Top management",
    "Senior management",
    "Professionally qualified/experienced specialists/mid-management",
    "Skilled technical, academically qualified workers, junior management, supervisors, foremen, superintendents",
    "Semi-skilled / discretionary decision making",
    "Unskilled / defined decision making",
    "TOTAL PERMANENT",
    "Temporary employees",
    "GRAND TOTAL",
]


def value(dis, l, r, g):
    if l < 6:
        return (l + r + g) % 2 if dis else 1 + l + 2 * r + g
    perm = sum(value(dis, k, r, g) for k in range(6))
    temp = g if dis else 3 + r + g
    return {6: perm, 7: temp, 8: perm + temp}[l]


def meta(ws, name, start, end, col=1, row=3):
    ws.cell(row=1, column=col, value="EMPLOYMENT EQUITY PLAN - WORKFORCE TARGETS")
    for i, (lab, v) in enumerate([("Plan name:", name),
                                  ("Company registration number:", "2009/012345/07"),
                                  ("Start date:", start), ("End date:", end)]):
        ws.cell(row=row + i, column=col, value=lab)
        c = ws.cell(row=row + i, column=col + 1, value=v)
        if isinstance(v, datetime.date):
            c.number_format = "yyyy-mm-dd"
    return row + 5


def eea2(ws, top, col, title, dis, levels, text_cells=(), blanks=()):
    """EEA2 table with its label at (top, col). Returns the next free row and
    the column of Total."""
    ws.cell(row=top, column=col, value=title)
    h1, h2 = top + 1, top + 2
    ws.cell(row=h1, column=col, value="Occupational Levels")
    ws.merge_cells(start_row=h1, start_column=col, end_row=h2, end_column=col)
    cols = []
    c = col + 1
    for g, gname in enumerate(["Male", "Female"]):
        ws.cell(row=h1, column=c, value=gname)
        ws.merge_cells(start_row=h1, start_column=c, end_row=h1, end_column=c + 3)
        for r, rl in enumerate("ACIW"):
            ws.cell(row=h2, column=c + r, value=rl)
            cols.append((c + r, r, g))
        c += 4
    ws.cell(row=h1, column=c, value="Foreign Nationals")
    ws.merge_cells(start_row=h1, start_column=c, end_row=h1, end_column=c + 1)
    for g, gname in enumerate(["Male", "Female"]):
        ws.cell(row=h2, column=c + g, value=gname)
        cols.append((c + g, 4, g))
    c += 2
    ws.cell(row=h1, column=c, value="Total")
    ws.merge_cells(start_row=h1, start_column=c, end_row=h2, end_column=c)
    for l, lv in enumerate(levels):
        row = h2 + 1 + l
        ws.cell(row=row, column=col, value=lv)
        s = 0
        for cc, r, g in cols:
            v = value(dis, l, r, g)
            s += v
            if (l, r, g) in blanks:
                continue
            ws.cell(row=row, column=cc, value=str(v) if (l, r, g) in text_cells else v)
        ws.cell(row=row, column=c, value=s)
    return h2 + 1 + len(levels) + 2, c


def offset():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "EEA2 Section C"
    r = meta(ws, "Offset plan", datetime.date(2026, 9, 1), datetime.datetime(2029, 8, 31), col=2)
    # grid labels in column C, table C..N
    r, _ = eea2(ws, r, 3, "Year 1 (2026/2027): all employees, including people with disabilities", False,
                LEVELS_OFFICIAL, text_cells={(0, 0, 0)})
    r, _ = eea2(ws, r, 3, "Year 1 (2026/2027): people with disabilities only", True, LEVELS_NO_OXFORD,
                blanks={(5, 3, 1), (7, 4, 0)})
    eea2(ws, r, 3, "Year 2 (2027/2028): Total number of employees (including employees with disabilities)",
         False, LEVELS_NO_OXFORD)
    wb.save("rv_op_eea2_offset.xlsx")


def stray():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Stray"
    meta(ws, "Stray plan", "03/04/2026", "31/08/2029")     # B5 start, B6 end
    # label A8, headers 9-10, levels 11-19, counters B..K, Total L
    eea2(ws, 8, 1, "Year 1 - All employees", False, LEVELS_OFFICIAL)
    ws.cell(row=11, column=13, value=42)        # M11: number right of Total
    ws.cell(row=12, column=13, value="n/a")     # M12: a note
    ws.cell(row=13, column=14, value="12 ")     # N13: number as text with a space
    ws.cell(row=14, column=13, value="twelve")  # M14: a word
    ws.cell(row=15, column=15, value="12")      # O15: number stored as text
    wb.save("rv_op_eea2_stray.xlsx")


def slash():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Slash"
    meta(ws, "Slash plan", "2026-09-01", "2029-08-31")
    for k, (title, dis) in enumerate([("FY2026/27 All Employees", False), ("FY2026/27 Employees with Disabilities", True)]):
        top = 8 + k * 14
        ws.cell(row=top, column=1, value=title)
        ws.cell(row=top + 1, column=1, value="Occupational level")
        cols = []
        for r, rn in enumerate(["African", "Coloured", "Indian", "White", "Foreign Nationals"]):
            c = 2 + 2 * r
            ws.cell(row=top + 1, column=c, value=rn)
            ws.merge_cells(start_row=top + 1, start_column=c, end_row=top + 1, end_column=c + 1)
            for g, gn in enumerate(["Male", "Female"]):
                ws.cell(row=top + 2, column=c + g, value=gn)
                cols.append((c + g, r, g))
        ws.cell(row=top + 1, column=12, value="Total")
        for l, lv in enumerate(LEVELS_SLASH):
            row = top + 3 + l
            ws.cell(row=row, column=1, value=lv)
            for c, r, g in cols:
                ws.cell(row=row, column=c, value=value(dis, l, r, g))
            ws.cell(row=row, column=12, value=sum(value(dis, l, r, g) for _, r, g in cols))
    wb.save("rv_op_slash_variants.xlsx")


def soffice_resave(name, out):
    tmp = tempfile.mkdtemp()
    subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                    os.path.abspath(name)], check=True, capture_output=True, timeout=180)
    shutil.copy(os.path.join(tmp, name), out)


if __name__ == "__main__":
    offset()
    stray()
    slash()
    for name in ["rv_op_eea2_offset.xlsx", "rv_op_eea2_stray.xlsx", "rv_op_slash_variants.xlsx"]:
        soffice_resave(name, name.replace("rv_op_", "rv_lo_"))
