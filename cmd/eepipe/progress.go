package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/eepipe/eepipe/pace"
	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/run"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"go.uber.org/zap"
	"golang.org/x/term"
)

// progressInterval is how often a run off a terminal logs where it is
// (a variable for tests).
var progressInterval = 10 * time.Second

// progress shows a run's progress: an mpb bar of the plans to change when
// stderr is a terminal, and a zap summary every progressInterval
// otherwise (cron, CI). Recalculation waits are logged in both cases. It
// is the runner's run.Observer: it is told what the run did and
// decides nothing of it.
type progress struct {
	f      *Factory
	log    *zap.Logger
	runner *run.Runner

	mu      sync.Mutex
	p       *mpb.Progress
	bar     *mpb.Bar
	total   int
	all     int
	changed int
	every   bool // the bar counts every plan (startAll), not only those to change
	shown   int  // plans shown by PlanCompared
	show    bool // PlanCompared shows each plan (showPlans)
	showAll bool // unchanged plans too
	cancel  context.CancelFunc
	done    chan struct{}
}

func newProgress(f *Factory, log *zap.Logger) *progress { return &progress{f: f, log: log} }

func (p *progress) attach(r *run.Runner) { p.runner = r }

// start begins showing progress of total plans to change out of all.
func (p *progress) start(ctx context.Context, total, all int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.all = total, all
	if total == 0 {
		return
	}
	// The bar is drawn on stderr itself, beneath the writer (f.bars) that
	// sends everything else above it while it is drawn.
	out := p.f.IO.ErrOut
	if p.f.bars != nil {
		out = p.f.bars.w
	}
	if p.f.IO.ErrTTY && !p.f.statusJSON() && usableTerminal(out) {
		p.p = mpb.NewWithContext(ctx, mpb.WithOutput(out), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond), mpb.WithAutoRefresh())
		prepend, appended := barDecorators(func() string {
			pr := p.runner.Progress()
			return pipeline.Plural(int(pr.Requests.Total), "request") + ", " + pipeline.Plural(int(pr.TargetsPatched), "target") + " patched"
		})
		p.bar = p.p.AddBar(int64(total), mpb.PrependDecorators(prepend...), mpb.AppendDecorators(appended...))
		if p.f.bars != nil {
			p.f.bars.above(p.p)
		}
		return
	}
	tctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		for pace.Sleep(tctx, progressInterval) == nil {
			pr := p.runner.Progress()
			p.log.Info("progress", zap.Int64("plans_done", pr.PlansDone), zap.Int("plans", p.all),
				zap.Int64("targets_patched", pr.TargetsPatched), zap.Int64("counters_changed", pr.CountersChanged),
				zap.Int64("requests", pr.Requests.Total))
		}
	}()
}

// barDecorators are the words before and after the bar: "applying plans
// 4 / 40 [bar] 10 %  12 requests, 3 targets patched". Each ends or starts
// with its own space, so that the words stay apart when a narrow terminal
// leaves the bar no room (mpb then draws it 0 wide): "4 / 4 100 %", never
// "4 / 4100 %".
func barDecorators(stats func() string) (prepend, appended []decor.Decorator) {
	prepend = []decor.Decorator{
		// One bar: no width to synchronise with other bars.
		decor.Name("applying plans "),
		decor.CountersNoUnit("%d / %d "),
	}
	appended = []decor.Decorator{
		decor.Percentage(decor.WC{W: 6}), // right-aligned: " 100 %", "  10 %"
		decor.Any(func(decor.Statistics) string { return "  " + stats() }),
	}
	return prepend, appended
}

// startAll begins showing progress of all plans, each counted when done:
// for a run that compares and applies each plan in turn, where the plans
// to change are not known in advance.
func (p *progress) startAll(ctx context.Context, all int) {
	p.mu.Lock()
	p.every = true
	p.mu.Unlock()
	p.start(ctx, all, all)
}

// maxShownPlans bounds the plans PlanCompared lists on a terminal.
const maxShownPlans = 30

// showPlans has PlanCompared show each plan on a terminal; unchanged
// shows the unchanged plans too.
func (p *progress) showPlans(unchanged bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.show, p.showAll = true, unchanged
}

// PlanCompared implements run.Observer. With showPlans each plan to
// change (or failed; unchanged too with showPlans(true)) is shown as it
// is about to be written, above the bar, up to maxShownPlans, then one
// line says the rest are not listed. A plan is its summary, as diff
// prints it (its fields, its counters counted); with -v its counters.
func (p *progress) PlanCompared(d *diff.PlanDiff) {
	p.mu.Lock()
	show, unchanged := p.show, p.showAll
	p.mu.Unlock()
	if !show || d.Action == diff.ActionUnchanged && !unchanged {
		return
	}
	p.mu.Lock()
	p.shown++
	n := p.shown
	p.mu.Unlock()
	var b strings.Builder
	switch {
	case n <= maxShownPlans:
		if n == 1 {
			b.WriteString("Each plan as it is compared, then written:\n")
		}
		_ = diff.RenderPlan(&b, d, diff.RenderOptions{Unchanged: unchanged, MaxCounters: 12, Brief: !p.f.Verbose})
	case n == maxShownPlans+1:
		fmt.Fprintf(&b, "(more plans are applied without being listed here; eepipe diff lists every change)\n")
	default:
		return
	}
	p.print(b.String())
}

// print writes s above the bar when one is shown, else to stderr.
func (p *progress) print(s string) {
	p.mu.Lock()
	pp := p.p
	p.mu.Unlock()
	if pp != nil {
		if _, err := pp.Write([]byte(s)); err == nil {
			return
		}
	}
	_, _ = io.WriteString(p.f.IO.ErrOut, s)
}

// PlanDone implements run.Observer: the bar counts the plan, and a
// failed plan is logged when no bar shows it.
func (p *progress) PlanDone(res *run.PlanResult) {
	p.mu.Lock()
	bar := p.bar
	p.mu.Unlock()
	p.mu.Lock()
	every := p.every
	p.mu.Unlock()
	if bar != nil && (every || res.Diff.Action.Changes()) {
		bar.Increment()
		p.mu.Lock()
		p.changed++
		last := p.changed == p.total
		p.mu.Unlock()
		if last {
			// Finish the display before the recalculations log below it.
			p.mu.Lock()
			p.release()
			p.p.Wait()
			p.bar, p.p = nil, nil
			p.mu.Unlock()
		}
	}
	if res.Outcome == run.OutcomeFailed {
		if bar == nil {
			p.log.Warn("plan failed", zap.String("plan", res.Diff.Title()), zap.String("account", res.Diff.Account), zap.Error(res.Err))
		}
	} else if ce := p.log.Check(zap.DebugLevel, "plan done"); ce != nil {
		// Checked first: the plan's title is built only when debug is on.
		ce.Write(zap.String("plan", res.Diff.Title()), zap.String("outcome", string(res.Outcome)), zap.Int64("plan_id", res.PlanID))
	}
}

// Recalc implements run.Observer: recalculations are logged.
func (p *progress) Recalc(ev run.RecalcEvent) {
	fields := []zap.Field{zap.String("scorecard", ev.ScorecardID), zap.String("account", ev.Account)}
	switch {
	case ev.Waiting > 0:
		p.log.Info(fmt.Sprintf("a recalculation of %s is already running (409); asking again in %s", ev.ScorecardID, ev.Waiting.Round(time.Millisecond)),
			append(fields, zap.Int("attempt", ev.Attempt))...)
	case ev.Err != nil:
		p.log.Warn("recalculation failed", append(fields, zap.Error(ev.Err))...)
	case ev.Done:
		p.log.Info("recalculation accepted", append(fields, zap.Int("attempts", ev.Attempt))...)
	}
}

// stop ends the display; the bar is completed or aborted.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		if !p.bar.Completed() {
			p.bar.Abort(false)
		}
		p.release()
		p.p.Wait()
		p.bar, p.p = nil, nil
	}
	if p.cancel != nil {
		p.cancel()
		<-p.done
		p.cancel = nil
	}
}

// release stops sending stderr above the bar, which is about to end:
// what is written from now on goes to stderr itself (what was sent above
// the bar is drawn by its last refresh). p.mu is held.
func (p *progress) release() {
	if p.f.bars != nil {
		p.f.bars.above(nil)
	}
}

// barWriter is stderr beneath the JSON line wrapper and the logger. While
// a progress bar is drawn (above), what is written goes through the bar's
// container, which prints it above the bar and redraws the bar below:
// log lines and messages (a failed catalog check's problem list) written
// during a run are neither drawn over nor cut by the bar's redraws.
// Otherwise, and once the bar has ended, it writes to w. Writes are
// serialised (wmu): the logger writes from every worker of a run, and a
// line must neither interleave with another nor race on w.
type barWriter struct {
	w   io.Writer
	mu  sync.Mutex
	p   *mpb.Progress
	wmu sync.Mutex
}

// Write implements io.Writer.
func (b *barWriter) Write(s []byte) (int, error) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	p := b.p
	b.mu.Unlock()
	if p != nil {
		// mpb copies s into its buffer before Write returns; ErrDone once
		// the bar has ended: then s goes to stderr itself.
		if n, err := p.Write(s); err == nil {
			return n, nil
		}
	}
	return b.w.Write(s)
}

// above sends what is written above the bars of p (nil: to w again).
func (b *barWriter) above(p *mpb.Progress) {
	b.mu.Lock()
	b.p = p
	b.mu.Unlock()
}

// routeStderr puts f.bars beneath stderr (once): Execute calls it before
// it wraps stderr in JSON lines, and the logger before it is made, so that
// a command run without Execute (tests) is routed too.
func (f *Factory) routeStderr() {
	if f.bars != nil {
		return
	}
	if f.rawErr != nil {
		// Wrapped already (Execute without the route): the logger's
		// stream is routed; the wrapper's lines are not.
		f.bars = &barWriter{w: f.rawErr}
		f.rawErr = f.bars
		return
	}
	f.bars = &barWriter{w: f.IO.ErrOut}
	io := *f.IO
	io.ErrOut = f.bars
	f.IO = &io
}

// usableTerminal reports whether a bar can be drawn on w: a terminal with a
// size (a pseudo-terminal without one, as some CI runners and `script`
// give, has none, and mpb draws nothing on a terminal without rows), or any
// other writer (tests).
func usableTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return true
	}
	width, height, err := term.GetSize(int(f.Fd()))
	return err == nil && width > 0 && height > 0
}
