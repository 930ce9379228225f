// Package xlsxtest makes and checks workbooks for the tests of formats and
// its sub-packages, as net/http/httptest does for HTTP: SmallFlat writes a
// small flat workbook, Parts and Zip take a workbook apart and put it back
// together, WriteHostile writes one with huge parts (a decompression bomb)
// that costs no memory to make, and StrictProblems and CheckStrict re-read
// a written workbook with the checks Excel, openpyxl and LibreOffice make
// on opening it.
//
// It imports nothing of this module, so the tests of every formats
// package, the XLSX engine's included, can use it. No production code
// imports it.
package xlsxtest
