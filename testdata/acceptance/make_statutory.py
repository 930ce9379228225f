#!/usr/bin/python3
"""Generates the statutory-layout fixtures of testdata/acceptance: grid plan
sheets in the shapes of the EE forms (EEA2 genders over races, races over
genders, one-row combined headers, single-letter races, EEA13 titles,
level-name variants), written by openpyxl and re-saved by LibreOffice, the
bad ones with problems planted at known cells, and a styled openpyxl
workbook for the reports that mark a consultant's own workbook.

Run once from this folder: /usr/bin/python3 make_statutory.py (needs
python3-openpyxl and soffice from libreoffice-calc-nogui). The outputs are
committed; the Go tests (formats/statutory_test.go, formats/strict_report_test.go)
never need Python or LibreOffice.

Counter values follow one formula, repeated in statutory_test.go, so that
every one of the 90 counters of a grid is checked: for level index l (0-5
for the six occupational levels), race index r (0-4: African, Coloured,
Indian, White, Foreign nationals) and gender index g (0 male, 1 female),
all employees hold 1 + l + 2r + g and employees with disabilities
(l + r + g) % 2; total permanent is the sum of the six levels, temporary
employees 3 + r + g (disabled: g), grand total permanent + temporary.
"""
import os, shutil, subprocess, tempfile
import openpyxl
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

RACE_NAMES = ["African", "Coloured", "Indian", "White"]
RACE_LETTERS = ["A", "C", "I", "W"]

# The level labels as form EEA2 prints them, and variants consultants type.
EEA2_LEVELS = [
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
VARIANT_LEVELS = [
    "TOP MANAGEMENT",
    "Senior Management",
    "Professionally qualified, experienced specialists and middle management",
    "Skilled technical and academically qualified workers/junior management/supervisors/foremen/superintendents",
    "Semi-skilled and discretionary decision-making",
    "Unskilled and defined decision-making",
    "Total Permanent",
    "Temporary Employees",
    "Grand Total",
]


def value(tt, l, r, g):
    """The counter of target type tt at level index l (0-8), race r, gender g."""
    dis = tt == "disabled"
    if l < 6:
        return (l + r + g) % 2 if dis else 1 + l + 2 * r + g
    perm = sum(value(tt, k, r, g) for k in range(6))
    temp = g if dis else 3 + r + g
    return {6: perm, 7: temp, 8: perm + temp}[l]


def meta(ws, name, vat="0412345678", start="2026-09-01", end="2029-08-31", row=1):
    for i, (lab, v) in enumerate([("Plan name", name), ("Company VAT number", vat),
                                  ("Start date", start), ("End date", end), ("Sector", "Manufacturing")]):
        ws.cell(row=row + i, column=1, value=lab)
        ws.cell(row=row + i, column=2, value=v)
    return row + 6


def eea2_grid(ws, top, title, tt, levels, merged=True, races=RACE_LETTERS, total=True):
    """Form EEA2's table: Male / Female over the races, then Foreign
    Nationals over Male / Female, then Total. Returns the next free row."""
    ws.cell(row=top, column=1, value=title)
    h1, h2 = top + 1, top + 2
    ws.cell(row=h1, column=1, value="Occupational Levels")
    if merged:
        ws.merge_cells(start_row=h1, start_column=1, end_row=h2, end_column=1)
    cols = []  # (column, race index, gender index)
    c = 2
    for g, gname in enumerate(["Male", "Female"]):
        ws.cell(row=h1, column=c, value=gname)
        if merged:
            ws.merge_cells(start_row=h1, start_column=c, end_row=h1, end_column=c + 3)
        for r in range(4):
            ws.cell(row=h2, column=c + r, value=races[r])
            cols.append((c + r, r, g))
        c += 4
    ws.cell(row=h1, column=c, value="Foreign Nationals")
    if merged:
        ws.merge_cells(start_row=h1, start_column=c, end_row=h1, end_column=c + 1)
    for g, gname in enumerate(["Male", "Female"]):
        ws.cell(row=h2, column=c + g, value=gname)
        cols.append((c + g, 4, g))
    c += 2
    if total:
        ws.cell(row=h1, column=c, value="Total")
        if merged:
            ws.merge_cells(start_row=h1, start_column=c, end_row=h2, end_column=c)
    for l, lv in enumerate(levels):
        row = h2 + 1 + l
        ws.cell(row=row, column=1, value=lv)
        s = 0
        for col, r, g in cols:
            v = value(tt, l, r, g)
            ws.cell(row=row, column=col, value=v)
            s += v
        if total:
            ws.cell(row=row, column=c, value=s)
    return h2 + 1 + len(levels) + 2


def race_over_gender_grid(ws, top, title, tt, levels, races):
    """Races (here the letters A, C, I, W) over Male / Female; not merged."""
    ws.cell(row=top, column=1, value=title)
    h1, h2 = top + 1, top + 2
    ws.cell(row=h1, column=1, value="Occupational level")
    cols = []
    for r, rn in enumerate(races):
        c = 2 + 2 * r
        ws.cell(row=h1, column=c, value=rn)
        for g, gname in enumerate(["M", "F"]):
            ws.cell(row=h2, column=c + g, value=gname)
            cols.append((c + g, r, g))
    ws.cell(row=h1, column=12, value="TOTAL")
    for l, lv in enumerate(levels):
        row = h2 + 1 + l
        ws.cell(row=row, column=1, value=lv)
        for col, r, g in cols:
            ws.cell(row=row, column=col, value=value(tt, l, r, g))
        ws.cell(row=row, column=12, value=sum(value(tt, l, r, g) for _, r, g in cols))
    return h2 + 1 + len(levels) + 2


def combined_grid(ws, top, title, tt, levels):
    """One header row of combined headers in several spellings."""
    heads = ["AM", "AF", "Coloured Male", "Coloured Female", "Male Indian", "Female Indian",
             "W male", "W female", "Foreign nationals male", "Foreign nationals female"]
    idx = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1)]
    ws.cell(row=top, column=1, value=title)
    ws.cell(row=top + 1, column=1, value="Level")
    for i, h in enumerate(heads):
        ws.cell(row=top + 1, column=2 + i, value=h)
    ws.cell(row=top + 1, column=12, value="Grand total")
    for l, lv in enumerate(levels):
        row = top + 2 + l
        ws.cell(row=row, column=1, value=lv)
        for i, (r, g) in enumerate(idx):
            ws.cell(row=row, column=2 + i, value=value(tt, l, r, g))
    return top + 2 + len(levels) + 2


def soffice_resave(name, out):
    tmp = tempfile.mkdtemp()
    subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                    os.path.abspath(name)], check=True, capture_output=True, timeout=180)
    shutil.copy(os.path.join(tmp, name), out)


# 1. Form EEA2 as printed: genders over the race letters, merged group
#    headers, Foreign Nationals, Total; the official level names. The
#    second grid carries the EEA13 title of all employees, the third is the
#    grid of employees with disabilities.
def eea2_merged():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "EEA2"
    r = meta(ws, "EEA2 merged")
    r = eea2_grid(ws, r, "Year 1 — 2026/27 — All employees", "all", EEA2_LEVELS)
    r = eea2_grid(ws, r, "Year 2 — 2027/28 — All employees, including people with disabilities", "all", EEA2_LEVELS)
    eea2_grid(ws, r, "Year 1 — 2026/27 — Employees with disabilities", "disabled", EEA2_LEVELS)
    wb.save("op_eea2_merged.xlsx")


# 2. The same table unmerged, the races written out, the level names with
#    commas, slashes and "middle management", the EEA13 wording.
def eea2_unmerged():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Workforce"
    r = meta(ws, "EEA2 unmerged")
    r = eea2_grid(ws, r, "Year 1 - All employees, including people with disabilities", "all", VARIANT_LEVELS,
                  merged=False, races=RACE_NAMES)
    eea2_grid(ws, r, "Year 1 - People with disabilities", "disabled", VARIANT_LEVELS, merged=False, races=RACE_NAMES)
    wb.save("op_eea2_unmerged.xlsx")


# 3. Races (single letters and "FN") over M / F, a TOTAL column.
def race_letters():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Letters"
    r = meta(ws, "Letters plan")
    r = race_over_gender_grid(ws, r, "FY 2026/27 all employees (incl. PWD)", "all", EEA2_LEVELS,
                              ["A", "C", "I", "W", "FN"])
    race_over_gender_grid(ws, r, "FY 2026/27 disabled employees", "disabled", VARIANT_LEVELS,
                          ["A", "C", "I", "W", "Foreign"])
    wb.save("op_race_letters.xlsx")


# 4. One row of combined headers ("AM", "Coloured Male", "Male Indian", ...).
def combined():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Combined"
    r = meta(ws, "Combined plan")
    r = combined_grid(ws, r, "Year 1 All employees", "all", EEA2_LEVELS)
    combined_grid(ws, r, "Year 1 Employees with disabilities", "disabled", EEA2_LEVELS)
    wb.save("op_combined.xlsx")


# 5. Bad: a number in a column the grid does not read (between the groups,
#    no header; right of Total, no header), an unclear title, an unknown
#    level label, an end date written 31/08/2029.
def eea2_bad():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Bad"
    r = meta(ws, "Bad plan", end="31/08/2029")          # B4: 31/08/2029
    top = r                                              # 7
    eea2_grid(ws, top, "Year 1 — 2026/27 — All employees", "all", EEA2_LEVELS, total=True)
    # rows: label 7, headers 8-9, levels 10-18; columns B-K counters, L Total
    ws.cell(row=12, column=13, value=42)                 # M12: stray, no header
    ws.cell(row=11, column=1, value="Senior managment / executives")  # A11: unknown level
    ws.cell(row=13, column=1,
            value="Skilled technical/academically qualified/junior mgmt/supervisors")  # A13: unknown level
    top2 = 21
    eea2_grid(ws, top2, "Year 1 — 2026/27 — All employees and employees with disabilities", "all",
              EEA2_LEVELS)                               # A21: unclear title
    wb.save("op_eea2_bad.xlsx")


# 6. Both grids of year 1 carry the EEA13 title of all employees: an error
#    at the second label, which must not claim disabled_employees twice.
def eea13_twice():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Twice"
    r = meta(ws, "Twice plan")                           # grids at row 7 and 20
    r = eea2_grid(ws, r, "Year 1 — All employees, including people with disabilities", "all", EEA2_LEVELS)
    eea2_grid(ws, r, "Year 1 — All employees, including people with disabilities", "disabled", EEA2_LEVELS)
    wb.save("op_eea13_twice.xlsx")


# 7. A stray number in a gap column: the sub-header of one race left
#    blank (its counters would be dropped), and a totals column headed
#    "Sum" (not Total).
def eea2_gap():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Gap"
    r = meta(ws, "Gap plan")                             # grid at row 7
    eea2_grid(ws, r, "Year 1 - All employees", "all", EEA2_LEVELS, merged=True)
    ws.cell(row=9, column=4).value = None                # D9: the "I" under Male erased
    ws.cell(row=8, column=12, value="Sum")               # L8: totals headed Sum
    wb.save("op_eea2_gap.xlsx")


# 8. A styled workbook for the reports that copy a cell's style: fonts,
#    fills and borders with openpyxl's "00"-alpha colours, a border without
#    a colour, a theme colour; problems on the styled cells.
def styled():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    ws.append(["plan_id", "plan_name", "start_date", "year_number", "target_type",
               "number_of_african_male_top_managers", "number_of_african_female_top_managers"])
    ws.append([17, "Acme 2026", "2026-09-01", 1, "all_employees", -1, 5])
    ws.append([18, "Acme 2027", "2027-09-01", 1, "all_employees", 3, 2.5])
    thin = Side(style="thin")
    red = Side(style="medium", color="00FF0000")
    for ref in ("F2", "G2", "F3", "G3", "A2", "B3"):
        c = ws[ref]
        c.font = Font(name="Arial", bold=True, color="00333399")
        c.fill = PatternFill("solid", fgColor="00DDEEFF")
        c.border = Border(left=thin, right=red, top=Side(style="dashed", color="000000FF"), bottom=thin)
        c.alignment = Alignment(horizontal="center")
        c.number_format = "#,##0"
    ws["G3"].font = Font(color=openpyxl.styles.colors.Color(theme=4, tint=-0.25))
    ws["C2"].number_format = "@"
    wb.save("op_styled_input.xlsx")


if __name__ == "__main__":
    eea2_merged()
    eea2_unmerged()
    race_letters()
    combined()
    eea2_bad()
    eea13_twice()
    eea2_gap()
    styled()
    for name in ["op_eea2_merged.xlsx", "op_eea2_unmerged.xlsx", "op_race_letters.xlsx", "op_combined.xlsx",
                 "op_eea2_bad.xlsx", "op_styled_input.xlsx"]:
        soffice_resave(name, "lo_" + name[3:])
