#!/usr/bin/python3
"""Writes the grid workbook fixtures of testdata/grid with openpyxl, a
program other than excelize, so that the reader is tested on another
writer's XML. Run once: /usr/bin/python3 make_fixtures.py. The tests only
read the committed .xlsx files; they never need Python."""
import datetime
from openpyxl import Workbook
from openpyxl.utils.datetime import CALENDAR_MAC_1904

RACES = ["African", "Coloured", "Indian", "White", "Foreign nationals"]
GENDERS = ["Male", "Female"]


def two_row_header(ws, row, col, races=RACES):
    """Race row (merged over the genders) and gender row."""
    ws.cell(row, col, "Occupational level")
    c = col + 1
    for r in races:
        ws.cell(row, c, r)
        ws.merge_cells(start_row=row, start_column=c, end_row=row, end_column=c + 1)
        ws.cell(row + 1, c, "Male")
        ws.cell(row + 1, c + 1, "Female")
        c += 2


def plan():
    wb = Workbook()
    notes = wb.active
    notes.title = "Notes"
    notes["A1"] = "Targets agreed with the client on 12 March; see the plan sheet."
    notes["A2"] = "All employees and disabled employees grids for year 1 and 2 are below."

    ws = wb.create_sheet("Acme 2026")
    ws["B2"] = "EE plan – Acme Foods"
    ws["B4"] = "Plan name:"
    ws["C4"] = "Acme EE plan 2026"
    ws["B5"] = "Company VAT number"
    ws["C5"] = 412345678
    ws["C5"].number_format = "0000000000"
    ws["B6"] = "company_registration_number"
    ws["C6"] = "2009/012345/07"
    ws["B7"] = "Start date"
    ws["C7"] = datetime.date(2026, 9, 1)
    ws["C7"].number_format = "dd/mm/yyyy"
    ws["B8"] = "END DATE"
    ws["D8"] = "2029-08-31"  # two columns right of its label, as text
    ws["B9"] = "Sector"
    ws["C9"] = "Manufacturing"
    ws["B10"] = "Scorecard"
    ws["C10"] = "scorecard_acme_2026"

    # Grid 1: year number and financial year, raw level keys, merged races.
    ws["B12"] = "Year 1 - 2026/2027 - All employees"
    two_row_header(ws, 13, 2)
    levels = ["top_managers", "senior_managers", "middle_managers", "junior_managers",
              "semi_skilled_employees", "unskilled_employees", "total_permanent_employees",
              "temporary_employees", "grand_total_employees"]
    for i, lv in enumerate(levels):
        ws.cell(15 + i, 2, lv)
        for j in range(10):
            if (i + j) % 4 == 3:
                continue  # blank: leave as is
            ws.cell(15 + i, 3 + j, (i + 1) * 10 + j)
    # Grid 2: financial year only, combined headers, human labels, some rows.
    ws["B26"] = "2026/27  Disabled employees"
    ws["B27"] = "Level"
    c = 3
    for r in RACES:
        for g in GENDERS:
            ws.cell(27, c, f"{r} {g.lower()}")
            c += 1
    for i, lv in enumerate(["Top management", "Senior Management", "semi-skilled"]):
        ws.cell(28 + i, 2, lv)
        for j in range(10):
            ws.cell(28 + i, 3 + j, j % 3)
    # Grid 3: year 2, placed to the right of grid 1, rows in another order,
    # counters typed as text and as decimals that are whole.
    ws["O12"] = "YEAR 2 — All Employees"
    two_row_header(ws, 13, 15)
    for i, lv in enumerate(["Unskilled", "Top management"]):
        ws.cell(15 + i, 15, lv)
        ws.cell(15 + i, 16, "5")
        ws.cell(15 + i, 17, 6.0)
        ws.cell(15 + i, 18, " 7 ")
    wb.save("openpyxl-plan.xlsx")


def bad():
    wb = Workbook()
    ws = wb.active
    ws.title = "Bad plan"
    ws["A1"] = "Plan ID"
    ws["B1"] = 4711
    ws["A2"] = "Start date"
    ws["B2"] = "03/04/2026"
    ws["A4"] = "Year 1 — All employees"
    two_row_header(ws, 5, 1, ["African", "Afrikan", "Indian", "White", "Foreign"])
    ws.cell(6, 5, "Mael")  # misspelt gender under "Afrikan"'s neighbour
    ws["A7"] = "Top managment"
    ws["B7"] = 3
    ws["A8"] = "Senior management"
    ws["B8"] = -1
    ws["C8"] = 2.5
    ws["D8"] = "abc"
    ws["F8"] = "#REF!"
    ws["A9"] = "Senior management"
    ws["B9"] = 1
    ws["A10"] = "Middle management"
    ws["B10"] = "=B8+1"
    # A grid with no label above it.
    two_row_header(ws, 13, 1)
    ws["A15"] = "Top management"
    ws["B15"] = 1
    # A second grid for the same year and type: duplicate.
    ws["A18"] = "Year 1 - All employees"
    two_row_header(ws, 19, 1)
    ws["A21"] = "Top management"
    ws["B21"] = 9
    hidden = wb.create_sheet("Hidden grid")
    hidden.sheet_state = "hidden"
    hidden["A1"] = "Year 1 — All employees"
    two_row_header(hidden, 2, 1)
    hidden["A4"] = "Top management"
    hidden["B4"] = 1
    wb.save("openpyxl-bad.xlsx")


def mac1904():
    wb = Workbook()
    wb.epoch = CALENDAR_MAC_1904
    ws = wb.active
    ws.title = "Plan 1904"
    ws["A1"] = "Plan name"
    ws["B1"] = "Mac plan"
    ws["A2"] = "Company ID number"
    ws["B2"] = "8001015009087"
    ws["A3"] = "Start date"
    ws["B3"] = datetime.date(2025, 9, 1)
    ws["B3"].number_format = "yyyy-mm-dd"
    ws["A4"] = "End date"
    ws["B4"] = datetime.date(2027, 8, 31)
    ws["B4"].number_format = "d mmm yyyy"
    ws["A6"] = "Year 2 — 2026/27 — Employees with disabilities"
    two_row_header(ws, 7, 1)
    ws["A9"] = "Grand total"
    ws["B9"] = 4
    ws["K9"] = 0
    wb.save("openpyxl-1904.xlsx")


plan()
bad()
mac1904()
