#!/bin/sh
# Opens every annotated copy the review tests wrote (run them with
# EEPIPE_RRCOPY_OUT=DIR go test ./formats/ -run TestReconcileCopy) in
# openpyxl (normal and read-only) and LibreOffice (to xlsx and to pdf),
# and prints one line per copy and reader. Needs python3-openpyxl and
# soffice; the Go tests do not run it.
set -u
dir=${1:?usage: check_rv_copies.sh DIR}
out=$(mktemp -d)
for f in "$dir"/*.xlsx; do
	/usr/bin/python3 - "$f" <<'PY'
import sys, warnings
warnings.simplefilter("error")
import openpyxl
p = sys.argv[1]
try:
    wb = openpyxl.load_workbook(p)
    n = sum(1 for ws in wb.worksheets for row in ws.iter_rows() for c in row if c.comment)
    ro = openpyxl.load_workbook(p, read_only=True)
    dims = [ws.calculate_dimension(force=True) for ws in ro.worksheets]
    print("openpyxl ok", p.rsplit("/", 1)[-1], wb.sheetnames, "comments", n, "dims", dims)
except Exception as e:
    print("openpyxl FAIL", p, repr(e))
PY
	for fmt in xlsx pdf; do
		if soffice --headless --convert-to "$fmt" --outdir "$out/$fmt" "$f" >"$out/log" 2>&1 && [ -s "$out/$fmt/$(basename "${f%.xlsx}").$fmt" ]; then
			echo "soffice $fmt ok $(basename "$f")"
		else
			echo "soffice $fmt FAIL $(basename "$f")"; cat "$out/log"
		fi
	done
done
rm -rf "$out"
