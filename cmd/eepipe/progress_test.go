package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vbauerster/mpb/v8/decor"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestPlanDoneDebugLine: a finished plan is logged at debug level with its
// title; with debug off the line, and the title, are not built at all.
func TestPlanDoneDebugLine(t *testing.T) {
	res := &run.PlanResult{
		Diff:    &diff.PlanDiff{Input: &pipeline.InputPlan{PlanID: 12, Name: "Acme 2025"}},
		Outcome: run.OutcomeUpdated,
		PlanID:  12,
	}
	core, logs := observer.New(zapcore.DebugLevel)
	newProgress(&Factory{}, zap.New(core)).PlanDone(res)
	got := logs.FilterMessage("plan done").All()
	if len(got) != 1 || got[0].ContextMap()["plan"] != `plan 12 "Acme 2025"` || got[0].ContextMap()["outcome"] != "updated" {
		t.Fatalf("debug: %+v", logs.All())
	}

	core, logs = observer.New(zapcore.InfoLevel)
	p := newProgress(&Factory{}, zap.New(core))
	if n := testing.AllocsPerRun(100, func() { p.PlanDone(res) }); n != 0 {
		t.Errorf("debug off: PlanDone allocates %v times per plan, want 0 (the debug line is built anyway)", n)
	}
	if logs.Len() != 0 {
		t.Errorf("debug off: %+v", logs.All())
	}
}

// TestBarWordsStayApart: the bar's words keep their spaces when a narrow
// terminal leaves the bar no room: "4 / 4 100 %", not "4 / 4100 %".
func TestBarWordsStayApart(t *testing.T) {
	prepend, appended := barDecorators(func() string { return "12 requests, 4 targets patched" })
	for _, st := range []decor.Statistics{{Total: 4, Current: 4, Completed: true}, {Total: 40, Current: 4}} {
		var b strings.Builder
		for _, d := range append(append([]decor.Decorator(nil), prepend...), appended...) {
			s, _ := d.Decor(st)
			b.WriteString(s)
		}
		line := b.String()
		want := fmt.Sprintf("applying plans %d / %d ", st.Current, st.Total)
		if !strings.HasPrefix(line, want) || !regexp.MustCompile(`\d / \d+ +\d+ %  12 requests`).MatchString(line) {
			t.Errorf("bar words without the bar: %q", line)
		}
	}
}
