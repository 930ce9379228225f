// Package table reads and writes the flat and the long table: the flat
// table in CSV (ReadCSV) or in an XLSX sheet (FindSheet, ReadSheet, over
// the xlsx engine), the long table's lines (grouped into plans), and their
// writers (WriteFlatCSV, FlatCSVWriter, WriteSheet, WriteLongCSV,
// LongCSVWriter). It turns rows into pipeline Records and plans into rows;
// the domain rules live in package pipeline.
//
// It is the one home of these questions: which columns does a flat table
// have and how is its header read (FlatHeader, the header matching; the
// header row is found by templates.IsFlatHeaderCell), how is a CSV file's delimiter, encoding and line ending
// found, and how is a CSV cell kept from running as a formula
// (CSVSafeField, NewCSVWriter: every CSV eepipe writes goes through it;
// docs/formats.md). Which reader a file goes to is decided above it, in
// package formats.
package table
