// Package roster reads HR rosters, one row per employee, as payroll
// systems export them (Sage VIP's equity history CSV, SimplePay's "Skills
// & Equity" grid saved from Excel, PaySpace's "EEA2 Details" report), for
// eepipe profile (docs/profile-and-propose.md).
//
// It is the one home of these questions: which header names a roster
// column (Columns: the payroll systems' names, folded as labels are, and a
// mapping file's columns); whether a file is a roster at all (a header row
// naming race, gender and an occupational level or job grade, else
// *NotRosterError); and what a roster's race, gender and level words mean
// (Words: the grid vocabulary, templates.Matcher, with a mapping file's
// spellings and grades). CSV is read through formats/table's CSV opening
// (encodings, delimiter, bounds) and XLSX through formats/xlsx's streaming
// row scan, so a roster of any length is read in bounded memory. Counting
// the rows is package pipeline/profile's.
package roster
