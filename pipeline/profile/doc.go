// Package profile counts a roster's employees into the counter catalog's
// counters: the workforce profile that eepipe profile writes and eepipe
// propose starts from (docs/profile-and-propose.md).
//
// It is the one home of these questions: which occupational level a job
// grade is by form EEA9's table (Paterson classic and modern: Grade);
// what a roster's disability, nationality and employment-type cells mean
// (disabled, foreign, temporary); whether a row can be counted, and if not
// why (Counter.Add: an unknown or missing race, gender, level or grade, a
// level and a grade that disagree, a repeated employee number); and where
// a counted employee goes, as EEA2's workforce table counts: a permanent
// employee at their level and in total_permanent_employees, a temporary
// one only in temporary_employees, everyone in grand_total_employees, a
// foreign national in the foreign columns, every employee in
// all_employees and those with a disability in disabled_employees too.
//
// It reads no file: formats/roster reads the rows and says what the race,
// gender and level words mean (Vocabulary), with the built-in vocabulary
// and a mapping file.
package profile
