package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
)

// skipInvalid is apply --skip-invalid [--rejects FILE]: the plans with
// errors are set aside, not sent (assemble.SplitInvalid), and written back
// to FILE in their layout with their errors (reports.WriteRejects), before
// any request (docs/apply-and-state.md, "Skipping invalid plans").
type skipInvalid struct {
	rejects string // --rejects FILE (stamped in --output-dir), or ""
	grid    string // where grid sheets go beside flat rows (stamped too)
	base    string // --rejects as given
	wrote   func(path, base string)
	rej     assemble.Rejection
	paths   []string // the rejects files written
}

// newSkipInvalid is --skip-invalid of the run: with --output-dir the
// rejects file goes there under a UTC-stamped name and --keep prunes the
// older ones, as the run report's.
func newSkipInvalid(f *Factory, opts *applyOptions, sched *scheduledRun) *skipInvalid {
	s := &skipInvalid{base: opts.Rejects, wrote: sched.wrote}
	if opts.Rejects != "" {
		s.rejects = sched.outputPath(opts.Rejects)
		s.grid = sched.outputPath(reports.GridRejectsPath(opts.Rejects))
		if dir := reportInInputFolder(s.rejects, opts.Args); dir != "" {
			f.Logger().Warn(fmt.Sprintf("the rejects file %s is written inside the input folder %s: the next run over that folder will read it as a workbook too; write it elsewhere",
				s.rejects, dir))
		}
	}
	return s
}

// checkRejectsOptions checks --skip-invalid and --rejects before anything
// is read: --rejects needs --skip-invalid, a .xlsx or .csv name in a
// folder that exists, and is not an input.
func checkRejectsOptions(opts *applyOptions) error {
	if _, saved := savedChangeSetArg(opts); saved && opts.SkipInvalid {
		return exitf(ExitInvalid, "--skip-invalid: a saved change set was checked when diff -o wrote it and is applied whole or not at all")
	}
	if opts.Rejects == "" {
		return nil
	}
	if !opts.SkipInvalid {
		return exitf(ExitInvalid, "--rejects %s: the rejected plans are those --skip-invalid sets aside; give --skip-invalid too", opts.Rejects)
	}
	ext := strings.ToLower(filepath.Ext(opts.Rejects))
	if ext != ".xlsx" && ext != ".csv" {
		return exitf(ExitInvalid, "--rejects %s: use a .xlsx or .csv file name", opts.Rejects)
	}
	if err := refuseMissingFolder("--rejects", opts.Rejects, opts.Schedule.OutputDir); err != nil {
		return err
	}
	for _, a := range opts.Args {
		for _, out := range []string{opts.Rejects, reports.GridRejectsPath(opts.Rejects)} {
			if validateSameFile(out, a) {
				return exitf(ExitInvalid, "--rejects %s: write the rejects to a new file, not over the input %s", opts.Rejects, a)
			}
		}
	}
	if opts.DryRun {
		return exitf(ExitInvalid, "--rejects: --dry-run sends nothing and writes no rejects; eepipe validate --annotate marks a workbook's errors")
	}
	return nil
}

// split sets the plans with errors aside (batch keeps the plans to send
// and the warnings), prints what it set aside and writes the rejects file.
// A rejects file that cannot hold the rejects in their layout is invalid
// usage (exit 2), one that cannot be written fatal (exit 3): either way
// before any request.
func (s *skipInvalid) split(f *Factory, batch *pipeline.Batch, cat *pipeline.Catalog) error {
	send, rej := assemble.SplitInvalid(batch)
	s.rej = rej
	n := batch.Count(pipeline.Error)
	batch.Plans = send
	var warnings pipeline.Problems
	for _, p := range batch.Problems {
		if p.Severity != pipeline.Error {
			warnings = append(warnings, p)
		}
	}
	batch.Problems = warnings
	w := f.IO.ErrOut
	fmt.Fprintf(w, "--skip-invalid: %s with %s set aside, not sent; %s to apply.\n",
		pipeline.Plural(len(rej.Plans), "plan"), pipeline.Plural(n, "error"), pipeline.Plural(len(send), "valid plan"))
	for _, file := range rej.WholeFiles {
		fmt.Fprintf(w, "  %s is rejected whole: an error there belongs to no one plan (its header, a row whose plan key is in error, or the file itself).\n", file)
	}
	if s.rejects == "" {
		return nil
	}
	words, err := f.mappingFile()
	if err != nil {
		return err
	}
	written, err := reports.WriteRejects(s.rejects, s.grid, &rej, cat, words)
	switch {
	case errors.Is(err, reports.ErrRejectsLayout):
		return exitf(ExitInvalid, "--rejects: %v; nothing was sent", err)
	case err != nil:
		return exitf(ExitFatal, "--rejects: %v; nothing was sent", err)
	}
	for _, p := range written.Paths {
		base := s.base
		if p == s.grid {
			base = reports.GridRejectsPath(s.base)
		}
		s.wrote(p, base)
		s.paths = append(s.paths, p)
		fmt.Fprintf(w, "Rejects written to %s: fix the marked cells and apply it again.\n", p)
	}
	for _, file := range written.NotCopied {
		fmt.Fprintf(w, "  %s is not in the rejects file: no table could be read from it; fix it (see its errors above) and apply it again.\n", file)
	}
	return nil
}

// rejectedLine is the console line that counts the plans set aside.
func (s *skipInvalid) rejectedLine() string {
	if s == nil || s.rej.Empty() {
		return ""
	}
	line := fmt.Sprintf("Rejected: %s not sent (errors)", pipeline.Plural(len(s.rej.Plans), "plan"))
	if len(s.paths) > 0 {
		line += ", handed back in " + strings.Join(s.paths, " and ")
	}
	return line + "."
}
