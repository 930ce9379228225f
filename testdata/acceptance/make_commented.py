#!/usr/bin/python3
"""Generates op_commented.xlsx and lo_commented.xlsx: a consultant's
workbook that already carries comments (notes) on some cells, written by
openpyxl and re-saved by LibreOffice, for the annotated reconciliation
copy, which must keep every comment and put its own above the one a
marked cell already has (formats/reconcile_copy_test.go).

Sheet "Targets": a header row of text (shared strings), plan rows with
numbers; B2 and D3 carry comments by "Consultant"; row 5 is empty (not in
the sheet's data), F2 is an empty cell. Sheet "Notes" has a comment on A1
and is the selected tab.

Run once from this folder: /usr/bin/python3 make_commented.py (needs
python3-openpyxl and soffice). The outputs are committed; the Go tests
never need Python or LibreOffice.
"""
import os, shutil, subprocess, tempfile
import openpyxl
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)


def soffice_resave(name, out):
    tmp = tempfile.mkdtemp()
    subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                    os.path.abspath(name)], check=True, capture_output=True, timeout=180)
    shutil.copy(os.path.join(tmp, name), out)


wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Targets"
ws.append(["plan_name", "start_date", "target_type", "number_of_african_male_top_managers", "number_of_african_female_top_managers"])
ws.append(["Acme 2026", "2026-09-01", "all_employees", 5, 0])
ws.append(["Acme 2027", "2027-09-01", "all_employees", 3, 3])
ws.append(["Acme 2028", "2028-09-01", "all_employees", 1, 2])
ws["A1"].font = Font(bold=True)
ws["D2"].fill = PatternFill("solid", fgColor="DDEEFF")
ws["B2"].comment = Comment("Check the start date with HR", "Consultant")
ws["D3"].comment = Comment("From the 2025 report", "Consultant")
notes = wb.create_sheet("Notes")
notes["A1"] = "Notes of the consultant"
notes["A1"].comment = Comment("Keep this sheet", "Consultant")
wb.active = 1
for s in wb.worksheets:
    s.sheet_view.tabSelected = s.title == "Notes"
wb.save("op_commented.xlsx")
soffice_resave("op_commented.xlsx", "lo_commented.xlsx")
