#!/usr/bin/python3
"""Generates op_rv_features.xlsx (openpyxl) and lo_rv_features.xlsx (the
same re-saved by LibreOffice) for the tests of the streamed annotated
reconciliation copy (formats/reconcile_copy_test.go,
TestReconcileCopyOtherPrograms).

op_rv_chartsheet.xlsx and lo_rv_chartsheet.xlsx: a chart sheet between two
worksheets, the active tab.

op_rv_features.xlsx sheets, in order:
  "O'Brien – Plan ñ"  data, a formula with its cached value, a merged
                       A1:C1 title, print titles and an autofilter (defined
                       names), a comment by "HR Lead", a bar chart drawing,
                       frozen panes; the selected tab
  "Summary"            a sheet of the consultant's already named Summary
  "Hidden"             hidden, with data
  "VeryHidden"         very hidden, with data

Run once from this folder: /usr/bin/python3 make_reconcile_shapes.py (needs
python3-openpyxl and soffice). The outputs are committed; the Go tests
never need Python or LibreOffice.
"""
import os, shutil, subprocess, tempfile
import openpyxl
from openpyxl.chart import BarChart, Reference
from openpyxl.comments import Comment
from openpyxl.styles import Font

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

wb = openpyxl.Workbook()
ws = wb.active
ws.title = "O'Brien \u2013 Plan \u00f1"
ws["A1"] = "Acme plan targets"
ws["A1"].font = Font(bold=True)
ws.merge_cells("A1:C1")
ws.append(["plan_name", "target_type", "number_of_african_male_top_managers", "number_of_african_female_top_managers", "total"])
ws.append(["Acme 2026", "all_employees", 5, 0, "=C3+D3"])
ws.append(["Acme 2027", "all_employees", 3, 3, "=C4+D4"])
ws.append(["Acme 2028", "all_employees", 1, 2, "=C5+D5"])
ws["C3"].comment = Comment("Confirmed by HR", "HR Lead")
ws.print_title_rows = "2:2"
ws.auto_filter.ref = "A2:E5"
ws.freeze_panes = "A3"
chart = BarChart()
chart.add_data(Reference(ws, min_col=3, min_row=2, max_row=5), titles_from_data=True)
ws.add_chart(chart, "G2")
s = wb.create_sheet("Summary")
s.append(["Consultant's own summary"])
s.append(["plans", 3])
h = wb.create_sheet("Hidden")
h.append(["lookup", 1])
h.sheet_state = "hidden"
v = wb.create_sheet("VeryHidden")
v.append(["secret", 2])
v.sheet_state = "veryHidden"
wb.save("op_rv_features.xlsx")

tmp = tempfile.mkdtemp()
subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                os.path.abspath("op_rv_features.xlsx")], check=True, capture_output=True, timeout=180)
shutil.copy(os.path.join(tmp, "op_rv_features.xlsx"), "lo_rv_features.xlsx")

# op_rv_chartsheet.xlsx / lo_rv_chartsheet.xlsx: a chart sheet between two
# worksheets, the chart sheet the active (selected) tab.
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Data"
ws.append(["plan_name", "number_of_african_male_top_managers"])
ws.append(["Acme 2026", 5])
ws.append(["Acme 2027", 3])
cs = wb.create_chartsheet("Chart")
chart = BarChart()
chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=3), titles_from_data=True)
cs.add_chart(chart)
after = wb.create_sheet("After")
after.append(["plan_name", "number_of_african_female_top_managers"])
after.append(["Acme 2026", 7])
wb.active = 1
ws.sheet_view.tabSelected = False
cs.sheetViews.sheetView[0].tabSelected = True
wb.save("op_rv_chartsheet.xlsx")
subprocess.run(["soffice", "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", tmp,
                os.path.abspath("op_rv_chartsheet.xlsx")], check=True, capture_output=True, timeout=180)
shutil.copy(os.path.join(tmp, "op_rv_chartsheet.xlsx"), "lo_rv_chartsheet.xlsx")
