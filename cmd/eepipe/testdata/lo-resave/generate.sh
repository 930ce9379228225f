#!/bin/sh
# Regenerates hostile-grid-export.xlsx: the grid export (with charts and
# the Sector targets sheet) of the plans of TestExportGridHostileNames,
# opened and saved again by LibreOffice Calc. Run from the repository root;
# needs soffice (Debian: libreoffice-calc-nogui).
set -eu
out=$(mktemp -d)
EEPIPE_KEEP_EXPORT="$out" go test ./cmd/eepipe -run 'TestExportGridHostileNames$' -count=1
soffice -env:UserInstallation="file://$out/profile" --headless --convert-to xlsx --outdir "$out/lo" "$out/charts.xlsx"
cp "$out/lo/charts.xlsx" cmd/eepipe/testdata/lo-resave/hostile-grid-export.xlsx
rm -rf "$out"
