package formats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/formats/table"
	"github.com/eepipe/eepipe/formats/xlsx"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/assemble"
)

// ReadOptions tune ReadFiles.
type ReadOptions struct {
	Catalog *pipeline.Catalog // counter names; nil means the default catalog
	Limits  xlsx.Limits       // bounds of one file; zero fields take the defaults

	// Words is the mapping file (docs/formats.md, the mapping file): a
	// client's own words for levels, races and genders in grids, column
	// names in flat tables, and sectors in sector cells; nil teaches
	// nothing.
	Words *mapping.File

	// Bound, when set, keeps the first few problems of each kind and
	// sets the rest aside (counted in Batch.Omitted, passed to its
	// Overflow); nil keeps every problem.
	Bound *pipeline.ProblemBound
}

// ErrInternal is the class of errors that are eepipe's fault, not the
// input's: a reader that panicked. errors.Is(err, ErrInternal) tells them
// from an invalid file, so that a crash never exits as invalid input.
var ErrInternal = errors.New("internal error")

// InternalError is a reader that panicked on a file.
type InternalError struct {
	File  string // the file being read
	Value any    // what the reader panicked with
	Stack []byte // the reader's stack
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error while reading %s (a bug in eepipe, not a problem of the file; please report it with this message): %v", e.File, e.Value)
}

// Is makes errors.Is(err, ErrInternal) true.
func (e *InternalError) Is(target error) bool { return target == ErrInternal }

// ReadFiles reads input files and folders (the .xlsx and .csv files in
// them, in name order) and returns the plans they describe with every
// problem found, reading and validation alike, in one pass. Each file's
// layout is detected: a flat table (CSV, or an XLSX sheet with a
// target_type header) or grid plan sheets. A file that cannot be read at
// all (missing, not a workbook, encrypted, truncated) is one problem; the
// other files are still read. The error is only for a call that cannot
// attempt anything (no paths), or an *InternalError when a reader
// panicked (a bug, never reported as a problem of the file).
func ReadFiles(paths []string, opts ReadOptions) (*pipeline.Batch, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input files given")
	}
	cat := opts.Catalog
	if cat == nil {
		cat = pipeline.DefaultCatalog()
	}
	var ps pipeline.Problems
	files := readExpandInputs(paths, &ps)
	asm := assemble.NewAssembler(cat)
	asm.Bound(opts.Bound)
	if !opts.Words.Empty() {
		asm.TeachSectors(opts.Words.Sector)
	}
	emit := asm.Add
	admitted := 0
	compact := func() {
		if opts.Bound.Enabled() {
			ps = append(ps[:admitted], opts.Bound.Admit(ps[admitted:])...)
			admitted = len(ps)
		}
	}
	if opts.Bound.Enabled() {
		emit = func(r pipeline.Record) {
			asm.Add(r)
			if len(ps)-admitted > 4096 {
				compact()
			}
		}
	}
	for _, f := range files {
		if err := readInputFile(f.path, f.kind, opts.Limits, cat, opts.Words, emit, &ps); err != nil {
			return nil, err
		}
		compact()
	}
	plans, aps := asm.Finish()
	ps = append(ps, aps...)
	markCatalogProblems(ps)
	ps.Sort()
	batch := &pipeline.Batch{Plans: plans, Problems: ps, Omitted: opts.Bound.Omitted()}
	batch.UnplacedSheets, batch.UnplacedRows = asm.Unplaced()
	for _, f := range files {
		batch.Files = append(batch.Files, f.path)
	}
	return batch, nil
}

type readKind int

const (
	readKindCSV readKind = iota + 1
	readKindXLSX
)

type readInput struct {
	path string
	kind readKind
}

// readKindOf returns the kind of a file by its name.
func readKindOf(name string) (readKind, bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".tsv", ".txt":
		return readKindCSV, true
	case ".xlsx", ".xlsm":
		return readKindXLSX, true
	}
	return 0, false
}

// readExpandInputs turns the paths given into files: folders contribute their
// .xlsx and .csv files in name order (lock files such as ~$plan.xlsx and
// hidden files are skipped); each file is read once.
func readExpandInputs(paths []string, ps *pipeline.Problems) []readInput {
	var out []readInput
	seen := map[string]bool{}
	add := func(p string, k readKind) {
		key := filepath.Clean(p)
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, readInput{p, k})
		}
	}
	for _, p := range paths {
		o := pipeline.Origin{File: p}
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			ps.Errorf(o, "", "the file or folder does not exist")
			continue
		case err != nil:
			ps.Errorf(o, "", "cannot be read: %v", readPathError(err))
			continue
		}
		if !st.IsDir() && !st.Mode().IsRegular() {
			ps.Errorf(o, "", "%s", xlsx.NotRegular(st.Mode()))
			continue
		}
		if !st.IsDir() {
			k, ok := readKindOf(p)
			if !ok {
				ps.Errorf(o, "", "unsupported file type %q: eepipe reads .xlsx workbooks and .csv files", pipeline.Excerpt(filepath.Ext(p)))
				continue
			}
			add(p, k)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			ps.Errorf(o, "", "the folder cannot be read: %v", readPathError(err))
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		n := 0
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
				continue
			}
			ext := strings.ToLower(filepath.Ext(name))
			if ext != ".csv" && ext != ".xlsx" {
				continue
			}
			// A folder's entries are followed like the paths given (a
			// symbolic link to a workbook is read), and only regular
			// files are read.
			full := filepath.Join(p, name)
			if est, err := os.Stat(full); err == nil && !est.Mode().IsRegular() {
				ps.Errorf(pipeline.Origin{File: full}, "", "%s", xlsx.NotRegular(est.Mode()))
				n++
				continue
			}
			k, _ := readKindOf(name)
			add(filepath.Join(p, name), k)
			n++
		}
		if n == 0 {
			ps.Warnf(o, "", "the folder has no .xlsx or .csv files")
		}
	}
	return out
}

func readPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readPanicHook, when set (by tests), is called as a reader starts on a
// file: a panic in it stands for a bug in a reader.
var readPanicHook func(path string)

// readInputFile reads one file into emit, every problem into ps. A reader
// that panics gives an *InternalError, never a problem of the file.
func readInputFile(path string, kind readKind, lim xlsx.Limits, cat *pipeline.Catalog, words *mapping.File, emit func(pipeline.Record), ps *pipeline.Problems) (err error) {
	o := pipeline.Origin{File: path}
	defer func() {
		if v := recover(); v != nil {
			err = &InternalError{File: path, Value: v, Stack: debug.Stack()}
		}
	}()
	// The path was checked (readExpandInputs), and is checked again on
	// the file opened: a named pipe or a device is never opened for
	// reading (opening a FIFO blocks until a writer comes).
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		ps.Errorf(o, "", "%s", xlsx.NotRegular(st.Mode()))
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|readOpenFlags, 0)
	if err != nil {
		ps.Errorf(o, "", "cannot be opened: %v", readPathError(err))
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		ps.Errorf(o, "", "cannot be read: %v", readPathError(err))
		return nil
	}
	if !st.Mode().IsRegular() {
		ps.Errorf(o, "", "%s", xlsx.NotRegular(st.Mode()))
		return nil
	}
	if readPanicHook != nil {
		readPanicHook(path)
	}
	switch kind {
	case readKindXLSX:
		if st.Size() == 0 {
			ps.Errorf(o, "", "the file is empty (0 bytes): it is not an XLSX workbook")
			return nil
		}
		readXLSXLimited(path, f, st.Size(), lim, cat, words, emit, ps)
	default:
		table.ReadCSV(path, f, cat, words, emit, ps)
	}
	return nil
}
