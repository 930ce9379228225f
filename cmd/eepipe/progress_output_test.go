package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient/sandbox"
	"github.com/eepipe/eepipe/pipeline"
)

// barLabel begins each frame of apply's progress bar (barDecorators).
const barLabel = "applying plans"

// ttyRecorder is a terminal's stderr in tests: it keeps what is written
// and says (drawn) when the progress bar was first drawn.
type ttyRecorder struct {
	mu    sync.Mutex
	b     bytes.Buffer
	once  sync.Once
	drawn chan struct{}
}

func (r *ttyRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, err := r.b.Write(p)
	if strings.Contains(r.b.String(), barLabel) {
		r.once.Do(func() { close(r.drawn) })
	}
	return n, err
}

func (r *ttyRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}

// screen replays s as a terminal shows it: the lines left on the screen
// once the cursor movements and erasures (the bar's redraws) are done.
func screen(s string) []string {
	var lines [][]rune
	row, col := 0, 0
	line := func() []rune {
		for len(lines) <= row {
			lines = append(lines, nil)
		}
		return lines[row]
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\x1b' && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';' || rs[j] == '?') {
				j++
			}
			if j == len(rs) {
				i = j
				continue
			}
			n, err := strconv.Atoi(string(rs[i+2 : j]))
			if err != nil {
				n = 0
			}
			switch rs[j] {
			case 'A':
				row = max(0, row-max(n, 1))
			case 'J':
				l := line()
				lines[row] = l[:min(col, len(l))]
				lines = lines[:row+1]
			case 'K':
				l := line()
				lines[row] = l[:min(col, len(l))]
			}
			i = j
		case c == '\r':
			col = 0
		case c == '\n':
			row, col = row+1, 0
			line()
		default:
			l := line()
			for len(l) <= col {
				l = append(l, ' ')
			}
			l[col] = c
			lines[row] = l
			col++
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(string(l), " ")
	}
	return out
}

// TestApplyCatalogProblemsAboveTheBar: on a terminal, the problem list of
// a failed served-catalog check, written while the progress bar is drawn,
// stays whole on the screen: it goes above the bar (through the bar's
// container), not under it where the bar's next redraw erases it.
func TestApplyCatalogProblemsAboveTheBar(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	e.singleAccount()
	seed := writeCSV(t, filepath.Join(e.dir, "seed.csv"), updateRows(1, 1))
	// No history of the set-up: the proxy is another address of the
	// service, which the store would refuse for the same key pair.
	if r := e.run("apply", seed, "--no-recalc", "--no-state"); r.code != 0 {
		t.Fatalf("set-up: exit %d\n%s", r.code, r.err)
	}
	e.vars[envBaseURL] = renamingProxy(t, e.srv.URL) // the service serves servedCounter, not builtinCounter
	file := writeCSV(t, filepath.Join(e.dir, "lacking.csv"), []row{
		{name: "Brand new", start: "2025-09-01", end: "2030-08-31", year: 1, typ: pipeline.TargetAll, counters: counters(builtinCounter, 1)}})

	rec := &ttyRecorder{drawn: make(chan struct{})}
	// The service's list of plans and the stored plan the check reads are
	// answered once the bar was drawn: the check runs while the bar is on
	// the screen, and the bar is redrawn with another request count than
	// its first frame's (as when the service answers after the bar's first
	// refresh, which a loaded machine made happen now and then).
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && req.URL.Path == "/api/public/v1/employment_equity_plans" {
			<-rec.drawn
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && planPath.MatchString(req.URL.Path) {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(b))
			if rerr != nil {
				return nil, rerr
			}
			<-rec.drawn
		}
		return resp, err
	})}
	var out bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: rec, ErrTTY: true}, Now: time.Now, Getenv: e.getenv}
	cmd := NewCmdApply(f, func(o *applyOptions) error {
		o.HTTPClient = hc
		_, err := runApply(context.Background(), f, o)
		return err
	})
	code := executeCmd(context.Background(), cmd, f, []string{file, "--no-recalc"})
	raw := rec.String()
	if code != ExitInvalid || !strings.Contains(raw, "is a counter the service does not have") {
		t.Fatalf("exit %d, want %d and the problem\n%q", code, ExitInvalid, raw)
	}
	// Every line written for people (no escape sequence: not a coloured
	// log line; not a frame of the bar, which its next frame replaces)
	// must be on the screen at the end, and the bar once, as last drawn.
	var lines []string
	lastFrame := ""
	for _, l := range strings.Split(raw, "\n") {
		l = strings.TrimRight(l, "\r ")
		if i := strings.Index(l, barLabel); i >= 0 {
			lastFrame = l[i:]
			continue
		}
		if l != "" && !strings.Contains(l, "\x1b") {
			lines = append(lines, l)
		}
	}
	shown := strings.Join(screen(raw), "\n")
	for _, l := range lines {
		if !strings.Contains(shown, l) {
			t.Errorf("the line %q is not on the screen; the screen:\n%s\nwritten:\n%q", l, shown, raw)
		}
	}
	if n := strings.Count(shown, barLabel); n != 1 || !strings.Contains(shown, lastFrame) {
		t.Errorf("the bar is on the screen %d times (want once, as last drawn: %q):\n%s", n, lastFrame, shown)
	}
}
