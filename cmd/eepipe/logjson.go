package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/eepipe/eepipe/formats/reports"
	"github.com/eepipe/eepipe/pipeline"
	"go.uber.org/zap"
)

// statusJSON reports whether every stderr line is a JSON log event: with
// --log-format json, and with auto when stderr is known not to be a
// terminal (a pipe or a file: cron, a log shipper). An unknown format
// (refused with exit 2) counts as auto, so that its error is a JSON event
// off a terminal too.
func (f *Factory) statusJSON() bool {
	switch f.LogFormat {
	case "json":
		return true
	case "console":
		return false
	}
	return f.IO.ErrNotTTY
}

// errRaw is the stderr stream under the JSON line wrapper: the logger
// writes its own events there.
func (f *Factory) errRaw() io.Writer {
	if f.rawErr != nil {
		return f.rawErr
	}
	return f.IO.ErrOut
}

// jsonLines is stderr when statusJSON may hold: each line a command
// prints for people ("Applied: ...", "Run report written to ...", an
// error) becomes a JSON log event with level, ts and msg; lines that are
// JSON events already (the logger's) pass through. When statusJSON does
// not hold, everything passes through unchanged.
type jsonLines struct {
	mu     sync.Mutex
	w      io.Writer
	active func() bool
	now    func() time.Time
	buf    []byte
}

func (j *jsonLines) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.active() {
		return j.w.Write(p)
	}
	j.buf = append(j.buf, p...)
	for {
		i := bytes.IndexByte(j.buf, '\n')
		if i < 0 {
			break
		}
		line := string(j.buf[:i])
		j.buf = j.buf[i+1:]
		if err := j.emit(line); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// Flush emits a last line without its newline.
func (j *jsonLines) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.buf) == 0 {
		return nil
	}
	line := string(j.buf)
	j.buf = nil
	return j.emit(line)
}

// WriteEvent writes text, which may hold several lines, as one event (or
// as it is when the lines are not JSON).
func (j *jsonLines) WriteEvent(text string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if text == "" {
		return nil
	}
	if !j.active() {
		_, err := io.WriteString(j.w, text)
		return err
	}
	return j.emit(strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\x00"))
}

// jsonEvent is one human line as a log event, with the logger's keys.
type jsonEvent struct {
	Level string `json:"level"`
	TS    string `json:"ts"`
	Msg   string `json:"msg"`
}

func (j *jsonLines) emit(line string) error {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if strings.HasPrefix(line, "{") && json.Valid([]byte(line)) {
		_, err := io.WriteString(j.w, line+"\n")
		return err
	}
	ev := jsonEvent{Level: "info", TS: j.now().Format("2006-01-02T15:04:05.000Z0700")}
	if m, ok := strings.CutPrefix(line, "eepipe: "); ok {
		ev.Level, line = "error", m
	}
	// WriteEvent joins its lines with NUL, which no message holds.
	ev.Msg = strings.ReplaceAll(strings.TrimSpace(line), "\x00", "\n")
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

// writeProblems reports a batch's problems on stderr: the readable report,
// or, when stderr lines are JSON, one event per problem with its place as
// fields, then a summary event.
func writeProblems(f *Factory, batch *pipeline.Batch) error {
	if !f.statusJSON() {
		return reports.WriteProblemsText(f.IO.ErrOut, batch)
	}
	log := f.Logger()
	for _, p := range batch.Problems {
		fields := []zap.Field{zap.String("severity", p.Severity.String()), zap.String("file", p.Origin.File)}
		if p.Origin.Sheet != "" {
			fields = append(fields, zap.String("sheet", p.Origin.Sheet))
		}
		if p.Origin.Cell != "" {
			fields = append(fields, zap.String("cell", p.Origin.Cell))
		}
		if p.Origin.Row > 0 {
			fields = append(fields, zap.Int("row", p.Origin.Row))
		}
		if p.Origin.Column > 0 {
			fields = append(fields, zap.Int("column", p.Origin.Column))
		}
		if p.Origin.Header != "" {
			fields = append(fields, zap.String("header", p.Origin.Header))
		}
		if p.Value != "" {
			fields = append(fields, zap.String("value", p.Value))
		}
		if len(p.Suggestions) > 0 {
			fields = append(fields, zap.Strings("suggestions", p.Suggestions))
		}
		fields = append(fields, zap.String("problem", p.Message))
		if p.Severity == pipeline.Error {
			log.Error("validation problem", fields...)
		} else {
			log.Warn("validation problem", fields...)
		}
	}
	// The problems not listed (the first few of each kind are), counted.
	for _, o := range batch.Omitted {
		fields := []zap.Field{zap.String("severity", o.Severity.String()), zap.String("file", o.File),
			zap.String("kind", o.Kind), zap.Int("count", o.Count)}
		if o.Severity == pipeline.Error {
			log.Error("validation problems not listed", fields...)
		} else {
			log.Warn("validation problems not listed", fields...)
		}
	}
	log.Info("validation summary", zap.Int("files", len(batch.Files)), zap.Int("plans", len(batch.Plans)),
		zap.Int("plans_with_errors", reports.PlansWithErrors(batch)),
		zap.Int("plan_sheets_in_no_plan", batch.UnplacedSheets), zap.Int("rows_in_no_plan", batch.UnplacedRows),
		zap.Int("errors", batch.Count(pipeline.Error)), zap.Int("warnings", batch.Count(pipeline.Warning)))
	return nil
}

// printError prints "eepipe: " and the error on w, as one event when w
// makes JSON events of the lines.
func printError(w io.Writer, err error) {
	text := "eepipe: " + err.Error() + "\n"
	if jl, ok := w.(*jsonLines); ok {
		_ = jl.WriteEvent(text)
		return
	}
	_, _ = io.WriteString(w, text)
}
