// Package mapping reads a mapping file: a client's own words for eepipe's
// names, taught in YAML instead of code (docs/formats.md, the mapping file).
//
// It is the one home of these questions: which keys a mapping file has
// (levels, races, genders, sectors, columns, grades) and which names each
// may map (Load); whether a file is well formed, naming the line of
// each problem (*Error); and what a spelling the file teaches means
// (File.Level, Race, Gender, Sector, Column, Grade). A nil *File teaches
// nothing, so callers pass the file they have, or nil.
//
// The built-in vocabulary stays in package templates (Matcher); readers
// consult the file's spellings where their kind is read: a level spelling
// counts in a level column, never in a gender header.
package mapping
