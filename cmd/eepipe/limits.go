package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/eepipe/eepipe/cmd/eepipe/gcpace"
	"github.com/eepipe/eepipe/formats"
	"github.com/eepipe/eepipe/formats/mapping"
	"github.com/eepipe/eepipe/pipeline"
)

// readOptions returns the options of formats.ReadFiles for the run: the
// catalog and the global --max-uncompressed limit.
func (f *Factory) readOptions(cat *pipeline.Catalog) (formats.ReadOptions, error) {
	opts := formats.ReadOptions{Catalog: cat}
	words, err := f.mappingFile()
	if err != nil {
		return opts, err
	}
	opts.Words = words
	if f.MaxUncompressed != "" {
		n, err := parseByteSize(f.MaxUncompressed)
		if err != nil {
			return opts, exitf(ExitInvalid, "--max-uncompressed %q: %v", f.MaxUncompressed, err)
		}
		opts.Limits.MaxUncompressed = n
	}
	return opts, nil
}

// mappingFile loads the mapping file the workbooks are read with: --map,
// else map: in the configuration (relative to its folder), else none. A
// file that cannot be read or is not well formed exits ExitInvalid with
// each problem and its line.
func (f *Factory) mappingFile() (*mapping.File, error) {
	path, from := f.MapPath, "--map"
	if path == "" && f.ConfigPath != "" {
		b, err := readSmallRegularFile(f.ConfigPath)
		if err != nil {
			return nil, exitf(ExitInvalid, "configuration: %v", err)
		}
		var fc struct {
			Map string `yaml:"map"`
		}
		if err := yaml.Unmarshal(b, &fc); err != nil {
			return nil, exitf(ExitInvalid, "configuration %s: %v", f.ConfigPath, err)
		}
		if path, from = strings.TrimSpace(fc.Map), "map: in "+f.ConfigPath; path != "" && !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(f.ConfigPath), path)
		}
	}
	if path == "" {
		return nil, nil
	}
	words, err := mapping.Load(path)
	if err != nil {
		return nil, exitf(ExitInvalid, "%s: %v", from, err)
	}
	return words, nil
}

// readFiles reads the input files (formats.ReadFiles) with the run's
// options. A reader that failed (formats.ErrInternal) exits ExitFatal,
// never ExitInvalid: the file is not known to be bad.
func (f *Factory) readFiles(paths []string, cat *pipeline.Catalog, bound ...*pipeline.ProblemBound) (*pipeline.Batch, error) {
	opts, err := f.readOptions(cat)
	if err != nil {
		return nil, err
	}
	// The first few problems of each kind are kept (and printed), the
	// others counted; validate passes its own bound (--report, --annotate).
	opts.Bound = &pipeline.ProblemBound{Keep: problemsPerKind}
	if len(bound) > 0 {
		opts.Bound = bound[0]
	}
	read := formats.ReadFiles
	if f.readFilesFunc != nil {
		read = f.readFilesFunc
	}
	batch, err := read(paths, opts)
	if errors.Is(err, formats.ErrInternal) {
		var ie *formats.InternalError
		if errors.As(err, &ie) && f.Debug {
			fmt.Fprintf(f.IO.ErrOut, "%s\n", ie.Stack)
		}
		return nil, &ExitError{Code: ExitFatal, Err: err}
	}
	if err != nil {
		return nil, exitf(ExitInvalid, "%v", err)
	}
	return batch, nil
}

// parseByteSize parses a size such as 1073741824, 512MB, 512MiB, 2G or
// 2GiB (K, M and G count 1024s, with or without i and B).
func parseByteSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "K"):
		mult = 1 << 10
	case strings.HasSuffix(t, "M"):
		mult = 1 << 20
	case strings.HasSuffix(t, "G"):
		mult = 1 << 30
	}
	if mult > 1 {
		t = t[:len(t)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult {
		return 0, errors.New("not a size; write bytes, or a number with K, M or G (for example 2G)")
	}
	return n * mult, nil
}

// defaultMemoryLimit is the Go runtime's soft memory limit unless
// GOMEMLIMIT sets one: the garbage collector works harder as the heap
// nears it, so that a large but legitimate read stays well within a
// small machine. It is not a hard cap; the readers' bounds are.
const defaultMemoryLimit = 1 << 30

func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// paceGC bounds the heap growth the garbage collector allows above the
// live heap to gcpace.DefaultHeadroom (32 MiB) for the process, up to
// 64 MiB live (above that, half the live heap), instead of as much again
// as the live heap (GOGC=100), so that the memory beyond what a command
// holds does not grow with it. A GOGC or GOMEMLIMIT in the environment
// turns it off.
func paceGC() {
	gcpace.Start(os.Getenv, gcpace.DefaultHeadroom)
}

// recoverInternal turns a panic on the command's goroutine into an
// internal error exiting ExitFatal (a Go panic would exit 2, which means
// invalid input).
func recoverInternal(v any, f *Factory) int {
	fmt.Fprintf(f.IO.ErrOut, "eepipe: internal error (a bug in eepipe, not a problem of the input; please report it with this message): %v\n%s", v, debug.Stack())
	return ExitFatal
}
