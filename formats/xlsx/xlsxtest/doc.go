// Package xlsxtest makes and checks workbooks for the tests of formats and
// its sub-packages, as net/http/httptest does for HTTP. SmallFlat writes a
// small flat workbook and SheetData one whose sheet holds given rows;
// Parts and Zip take a workbook apart and put it back together, ReadPart
// and RewritePart read or edit one part of a file, and WriteHostile writes
// a workbook with huge parts (a decompression bomb) that costs no memory
// to make. StrictProblems and CheckStrict re-read a written workbook with
// the checks Excel, openpyxl and LibreOffice make on opening it;
// CheckPrint checks every sheet's page setup against PrintWant.
//
// It imports nothing of this module but templates (the print scale), so
// the tests of every formats package, the XLSX engine's included, can use
// it. No production code imports it.
package xlsxtest
