#!/usr/bin/python3
"""Generates the EEA13 fixtures: the consultant's plan workbook as form
EEA13 lays out its section 4, in the words of the forms, the gazette and HR
systems, and the tables eepipe must refuse with their real cause.

  - eea13_plan: section 4.1 Workforce profile (two tables, one titled with
    a year: never a target), 4.2 Numerical goals (two tables titled only
    "all employees, including people with disabilities" and "people with
    disabilities only" under the heading), 4.3 Numerical targets for Year
    1 to 3 (2026/27 to 2028/29); the goals equal the final year's targets.
    Headers: genders over A C I W (merged), the gender-first codes MA ..
    FW FNM FNF, and races over genders with "Indian/Asian"; level labels
    numbered ("1. Top management"), EEA9's "Top Management/ Executives",
    footnotes "(1)"; the gazette's sector "Transportation and Storage".
  - eea13_disagree: the same, with two goal cells differing from the
    final year's targets (one a number, one a blank).
  - eea13_goals_only: the profile and the goals only.
  - refusals: sheets of occupational categories, an EEA4 income table in
    Rand, job grades in the level column, a percentage-formatted counter,
    a pandas-style two-row header with the level column's name on a row of
    its own (read), and a grid whose header no vocabulary reads.
  - client_words: a client's own words (Exco, Band D, Asian (incl.
    Indian)), read with client_words.yaml.

Each is written by openpyxl (op_*) and re-saved by LibreOffice (lo_*). Run
once from this folder: /usr/bin/python3 make_eea13.py (needs
python3-openpyxl and soffice). The outputs are committed; the Go test
(formats/eea13_test.go) never needs Python or LibreOffice.

Counter values: value(kind, year, dis, level, race, gender) below, mirrored
by eea13Value in formats/eea13_test.go.
"""
import datetime
import os
import shutil
import subprocess
import tempfile

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

LEVELS = [
    "1. Top Management/ Executives",
    "2. Senior management",
    "3. Professionally qualified and experienced specialists and mid-management",
    "4. Skilled technical and academically qualified workers, junior management, supervisors, foremen, and superintendents",
    "5. Semi-skilled and discretionary decision making",
    "6. Unskilled and defined decision making (1)",
    "TOTAL PERMANENT",
    "Temporary employees",
    "GRAND TOTAL",
]
LETTERED = ["a) Top management", "b) Senior management", "c) Professionally qualified / middle management",
            "d) Skilled technical / junior management", "e) Semi-skilled", "f) Unskilled",
            "Total permanent", "Temporary employees", "Grand total"]
RACES = 5  # African, Coloured, Indian, White, Foreign


def value(kind, year, dis, l, r, g):
    """kind: 0 targets, 1 profile (never read)."""
    if l < 6:
        base = (l + r + g + year) % 3 if dis else 2 + l + 3 * r + g + 5 * year
        return base + (1000 if kind == 1 else 0)
    perm = sum(value(kind, year, dis, k, r, g) for k in range(6))
    temp = (g + year) % 2 if dis else 1 + r + g + year
    return {6: perm, 7: temp, 8: perm + temp}[l]


def meta(ws, name, sector="Transportation and Storage"):
    ws.cell(row=1, column=1, value="EMPLOYMENT EQUITY PLAN (FORM EEA13)")
    for i, (lab, v) in enumerate([("Plan name:", name), ("Company VAT number:", "4012345678"),
                                  ("Start date:", datetime.date(2026, 9, 1)),
                                  ("End date:", datetime.date(2029, 8, 31)), ("Sector:", sector)]):
        ws.cell(row=3 + i, column=1, value=lab)
        c = ws.cell(row=3 + i, column=2, value=v)
        if isinstance(v, datetime.date):
            c.number_format = "yyyy-mm-dd"
    return 10


def gender_first(ws, top, title, vals, levels=LEVELS):
    """Genders over A C I W (merged), Foreign Nationals over Male/Female."""
    if title:
        ws.cell(row=top, column=1, value=title)
    h1, h2 = top + 1, top + 2
    ws.cell(row=h1, column=1, value="Occupational Levels")
    cols, c = [], 2
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
    ws.cell(row=h1, column=c + 2, value="Total")
    return body(ws, h2 + 1, cols, vals, levels, total_col=c + 2)


def codes(ws, top, title, vals, levels=LEVELS):
    """One header row of gender-first codes."""
    ws.cell(row=top, column=1, value=title)
    h = top + 1
    ws.cell(row=h, column=1, value="Occupational level")
    cols = []
    for i, code in enumerate(["MA", "MC", "MI", "MW", "FA", "FC", "FI", "FW", "FNM", "FNF"]):
        ws.cell(row=h, column=2 + i, value=code)
        r = "ACIW".index(code[1]) if len(code) == 2 else 4
        gender = code[0] if len(code) == 2 else code[2]  # MA: gender first; FNM: foreign national male
        cols.append((2 + i, r, 0 if gender == "M" else 1))
    return body(ws, h + 1, cols, vals, levels)


def races_over(ws, top, title, vals, levels=LETTERED, names=("African", "Coloured", "Indian/Asian", "White", "Foreign nationals")):
    ws.cell(row=top, column=1, value=title)
    h1, h2 = top + 1, top + 2
    ws.cell(row=h1, column=1, value="Occupational level")
    cols = []
    for r, rn in enumerate(names):
        c = 2 + 2 * r
        ws.cell(row=h1, column=c, value=rn)
        ws.merge_cells(start_row=h1, start_column=c, end_row=h1, end_column=c + 1)
        for g, gn in enumerate(["Male", "Female"]):
            ws.cell(row=h2, column=c + g, value=gn)
            cols.append((c + g, r, g))
    return body(ws, h2 + 1, cols, vals, levels)


def body(ws, first, cols, vals, levels, total_col=None):
    for l, lv in enumerate(levels):
        row = first + l
        ws.cell(row=row, column=1, value=lv)
        s = 0
        for c, r, g in cols:
            v = vals(l, r, g)
            if v is None:
                continue
            s += v
            ws.cell(row=row, column=c, value=v)
        if total_col:
            ws.cell(row=row, column=total_col, value=s)
    return first + len(levels) + 2


def plan_sheet(ws, name, goals=True, targets=True, disagree=False):
    r = meta(ws, name)
    ws.cell(row=r, column=1, value="4.1 Workforce profile")
    r = gender_first(ws, r + 1, "Workforce profile at the start of Year 1 (2026/27): all employees, including people with disabilities",
                     lambda l, rr, g: value(1, 0, False, l, rr, g))
    r = gender_first(ws, r, "Workforce profile (baseline, EEA2 2025/26): people with disabilities only",
                     lambda l, rr, g: value(1, 0, True, l, rr, g))
    if goals:
        ws.cell(row=r, column=1, value="4.2 Numerical goals (the whole workforce at the end of the plan)")

        def goal(dis):
            def v(l, rr, g):
                if disagree and not dis and (l, rr, g) == (0, 0, 0):
                    return value(0, 3, dis, l, rr, g) + 7
                if disagree and not dis and (l, rr, g) == (1, 3, 1):
                    return None
                return value(0, 3, dis, l, rr, g)
            return v
        r = gender_first(ws, r + 1, "All employees, including people with disabilities", goal(False))
        r = gender_first(ws, r, "People with disabilities only", goal(True))
    if targets:
        ws.cell(row=r, column=1, value="4.3 Numerical targets")
        r += 1
        for year, fy in [(1, "2026/27"), (2, "2027/28"), (3, "2028/29")]:
            shape = [gender_first, codes, races_over][year - 1]
            r = shape(ws, r, f"Year {year} ({fy}): all employees, including people with disabilities",
                      lambda l, rr, g, y=year: value(0, y, False, l, rr, g))
            r = shape(ws, r, f"Year {year} ({fy}): people with disabilities only",
                      lambda l, rr, g, y=year: value(0, y, True, l, rr, g))


def plan():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "EE Plan"
    plan_sheet(ws, "Acme EEA13 plan")
    wb.save("op_eea13_plan.xlsx")


def disagree():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "EE Plan"
    plan_sheet(ws, "Acme EEA13 plan", disagree=True)
    wb.save("op_eea13_disagree.xlsx")


def goals_only():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "EE Plan"
    plan_sheet(ws, "Acme goals plan", targets=False)
    wb.save("op_eea13_goals_only.xlsx")


def refusals():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Categories"
    meta(ws, "Categories plan")
    cats = ["Legislators, senior officials and managers", "Professionals", "Technicians and associate professionals",
            "Clerks", "Service and sales workers", "Skilled agricultural and fishery workers",
            "Craft and related trades workers", "Plant and machine operators and assemblers", "Elementary occupations"]
    gender_first(ws, 10, "Year 1 (2026/27): all employees", lambda l, r, g: 1, levels=cats)

    ws = wb.create_sheet("EEA4 Income")
    meta(ws, "Income plan")
    gender_first(ws, 10, "EEA4 Section B: Remuneration of all employees, 2026/27", lambda l, r, g: 250000 + 1000 * l + r, levels=LEVELS)
    for row in ws.iter_rows(min_row=13, max_row=21, min_col=2, max_col=12):
        for c in row:
            c.number_format = '"R" #,##0.00'

    ws = wb.create_sheet("Grades")
    meta(ws, "Grades plan")
    gender_first(ws, 10, "Year 1 (2026/27): all employees", lambda l, r, g: 2,
                 levels=["F", "E", "D Upper", "C3"])

    ws = wb.create_sheet("Percent")
    meta(ws, "Percent plan")
    gender_first(ws, 10, "Year 1 (2026/27): all employees", lambda l, r, g: 3, levels=LEVELS[:2])
    ws["B13"].value = 1
    ws["B13"].number_format = "0%"
    ws["C13"].value = 0.45
    ws["C13"].number_format = "0.0%"

    ws = wb.create_sheet("Unread header")
    meta(ws, "Unread plan")
    ws.cell(row=10, column=1, value="Year 1 (2026/27): all employees")
    for i, h in enumerate(["Occupational level", "Af-M", "Co-M", "In-M", "Wh-M"]):
        ws.cell(row=11, column=1 + i, value=h)
    for l, lv in enumerate(LEVELS[:3]):
        ws.cell(row=12 + l, column=1, value=lv)
        for i in range(4):
            ws.cell(row=12 + l, column=2 + i, value=l + i)
    wb.save("op_refusals.xlsx")


def pandas_header():
    """As pandas' DataFrame.to_excel writes a frame with two column levels
    and a named index: the race row (merged), the gender row, then the
    index name alone on its row, then the levels."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Targets"
    meta(ws, "Pandas plan")
    ws.cell(row=10, column=1, value="Year 1 (2026/27): all employees")
    races_over(ws, 10, "Year 1 (2026/27): all employees", lambda l, r, g: value(0, 1, False, l, r, g),
               levels=[""] * 0, names=("African", "Coloured", "Indian", "White", "Foreign nationals"))
    ws.cell(row=11, column=1, value=None)
    ws.cell(row=13, column=1, value="Occupational level")
    for l, lv in enumerate(["Top management", "Senior management"]):
        ws.cell(row=14 + l, column=1, value=lv)
        for r in range(5):
            for g in range(2):
                ws.cell(row=14 + l, column=2 + 2 * r + g, value=value(0, 1, False, l, r, g))
    wb.save("op_pandas_header.xlsx")


def client_words():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Client"
    meta(ws, "Client words plan", sector="Logistics")
    races_over(ws, 10, "Year 1 (2026/27): all employees", lambda l, r, g: 4 + l + r + g,
               levels=["Exco", "Band D"], names=("African", "Coloured", "Asian (incl. Indian)", "White", "Foreign nationals"))
    wb.save("op_client_words.xlsx")


def soffice_resave(name, out):
    tmp = tempfile.mkdtemp()
    subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                    os.path.abspath(name)], check=True, capture_output=True, timeout=180)
    shutil.copy(os.path.join(tmp, name), out)


if __name__ == "__main__":
    plan()
    disagree()
    goals_only()
    refusals()
    pandas_header()
    client_words()
    for name in ["op_eea13_plan.xlsx", "op_eea13_disagree.xlsx", "op_eea13_goals_only.xlsx", "op_refusals.xlsx",
                 "op_pandas_header.xlsx", "op_client_words.xlsx"]:
        soffice_resave(name, name.replace("op_", "lo_", 1))
