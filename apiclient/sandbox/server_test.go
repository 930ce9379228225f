package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eepipe/eepipe/apiclient"
)

// countingBody is a request body that counts the reads made of it and, when
// block is set, blocks each read until released.
type countingBody struct {
	reads   atomic.Int64
	started chan struct{} // closed at the first read
	release chan struct{} // closed to let reads proceed; nil: no blocking
	once    atomic.Bool
	data    *strings.Reader
}

func newCountingBody(data string, block bool) *countingBody {
	b := &countingBody{started: make(chan struct{}), data: strings.NewReader(data)}
	if block {
		b.release = make(chan struct{})
	}
	return b
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	if b.once.CompareAndSwap(false, true) {
		close(b.started)
	}
	if b.release != nil {
		<-b.release
	}
	return b.data.Read(p)
}

func (b *countingBody) Close() error { return nil }

// TestRefusedBeforeTheBodyIsRead: a request whose key is unknown, missing,
// unsigned or expired gets 401 without a single read of its body, and the
// connection is not kept (so the server does not drain the body either).
func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	fx := DefaultFixtures()
	fx.Accounts = append(fx.Accounts, Account{Name: "gone", APIKey: "mpk_gone", Secret: "s-gone", ExpiresAt: "2020-01-01"})
	sb, err := New(Options{Fixtures: fx})
	if err != nil {
		t.Fatal(err)
	}
	body := planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`)
	for name, tc := range map[string]struct{ key, auth string }{
		"unknown key":   {"mpk_nobody", apiclient.Signature(acmeSecret, plansPath, []byte(body))},
		"no key":        {"", apiclient.Signature(acmeSecret, plansPath, []byte(body))},
		"no signature":  {acmeKey, ""},
		"expired key":   {"mpk_gone", apiclient.Signature("s-gone", plansPath, []byte(body))},
		"expired, lies": {"mpk_gone", "HMAC x"},
	} {
		t.Run(name, func(t *testing.T) {
			cb := newCountingBody(body, true) // a read would block the test
			defer close(cb.release)
			r := httptest.NewRequest("POST", plansPath, nil)
			r.Body, r.ContentLength = cb, int64(len(body))
			if tc.key != "" {
				r.Header.Set("X-Api-Key", tc.key)
			}
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			sb.ServeHTTP(w, r)
			if w.Code != 401 || cb.reads.Load() != 0 {
				t.Errorf("status %d after %d reads of the body, want 401 after none", w.Code, cb.reads.Load())
			}
			if w.Header().Get("Connection") != "close" {
				t.Errorf("Connection %q, want close", w.Header().Get("Connection"))
			}
		})
	}
	// A known key's body is read, and a correct signature accepted.
	cb := newCountingBody(body, false)
	r := httptest.NewRequest("POST", plansPath, nil)
	r.Body, r.ContentLength = cb, int64(len(body))
	r.Header.Set("X-Api-Key", acmeKey)
	r.Header.Set("Authorization", apiclient.Signature(acmeSecret, plansPath, []byte(body)))
	w := httptest.NewRecorder()
	sb.ServeHTTP(w, r)
	if w.Code != 201 || cb.reads.Load() == 0 {
		t.Errorf("signed create: %d after %d reads", w.Code, cb.reads.Load())
	}
}

// rawConn dials the server; every read and write fails after a guard of
// 30 seconds instead of hanging the test.
func rawConn(t *testing.T, srv *Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	return conn
}

// TestRefusedBeforeTheBodyOverTCP: over 127.0.0.1, a POST announcing a
// megabyte of body under an unknown key is answered 401 although not one
// byte of the body was sent, and the connection is then closed.
func TestRefusedBeforeTheBodyOverTCP(t *testing.T) {
	srv := startSandbox(t, Options{})
	conn := rawConn(t, srv)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nX-Api-Key: mpk_nobody\r\nAuthorization: HMAC x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n", plansPath)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the body is withheld: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !resp.Close {
		t.Errorf("status %d, close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Errorf("after the refusal the connection gave %v, want it closed", err)
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

// TestTrickledBodyIsCutOff: a client sending its body a byte at a time is
// cut off with 408 once the body timeout has passed, and the connection
// closed, instead of holding it forever.
func TestTrickledBodyIsCutOff(t *testing.T) {
	srv := startSandbox(t, Options{Timeouts: Timeouts{Body: 200 * time.Millisecond}})
	conn := rawConn(t, srv)
	body := planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`) + strings.Repeat(" ", 4000)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		plansPath, acmeKey, apiclient.Signature(acmeSecret, plansPath, []byte(body)), len(body))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the trickled request got no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("status %d (close %v) %s, want 408 and the connection closed", resp.StatusCode, resp.Close, b)
	}
	if n := len(srv.Sandbox.Plans("acme")); n != 0 {
		t.Errorf("%d plans created from a body that never arrived", n)
	}
}

// TestIdleConnectionIsClosed: a keep-alive connection left without a
// request is closed after the idle timeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	srv := startSandbox(t, Options{Timeouts: Timeouts{Idle: 100 * time.Millisecond}})
	conn := rawConn(t, srv)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", statsPath)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("status %d, close %v: want a kept connection", resp.StatusCode, resp.Close)
	}
	// Nothing more is sent: the server must close the connection (the
	// guard deadline would turn a connection kept open into a timeout).
	_, err = br.ReadByte()
	if !errors.Is(err, io.EOF) && !isReset(err) {
		t.Errorf("idle connection: %v, want it closed by the server", err)
	}
}

// TestBodyReadsAreCapped: with MaxBodyReads 1, a second body is not read
// while a first one is still arriving; it is read once the first is in.
func TestBodyReadsAreCapped(t *testing.T) {
	sb, err := New(Options{MaxBodyReads: 1})
	if err != nil {
		t.Fatal(err)
	}
	body := planBody(`"start_date":"2025-09-01","end_date":"2026-08-31"`)
	send := func(cb *countingBody) chan int {
		r := httptest.NewRequest("POST", plansPath, nil)
		r.Body, r.ContentLength = cb, int64(len(body))
		r.Header.Set("X-Api-Key", acmeKey)
		r.Header.Set("Authorization", apiclient.Signature(acmeSecret, plansPath, []byte(body)))
		done := make(chan int, 1)
		go func() {
			w := httptest.NewRecorder()
			sb.ServeHTTP(w, r)
			done <- w.Code
		}()
		return done
	}
	first := newCountingBody(body, true)
	firstDone := send(first)
	<-first.started
	second := newCountingBody(body, false)
	secondDone := send(second)
	time.Sleep(50 * time.Millisecond) // room for a wrong second read to happen
	if n := second.reads.Load(); n != 0 {
		t.Errorf("the second body was read %d times while the first held the only slot", n)
	}
	close(first.release)
	if a, b := <-firstDone, <-secondDone; a != 201 || b != 201 {
		t.Errorf("statuses %d %d, want 201 201", a, b)
	}
}

// TestLatencyIsADeadlineFromArrival: a request is handled when it arrives;
// only its answer waits for the latency. With an hour of latency the plan
// exists long before the answer would leave.
func TestLatencyIsADeadlineFromArrival(t *testing.T) {
	srv := startSandbox(t, Options{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := planBody(`"name":"early","start_date":"2025-09-01","end_date":"2026-08-31"`)
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+plansPath, strings.NewReader(body))
	req.Header.Set("X-Api-Key", acmeKey)
	req.Header.Set("Authorization", apiclient.Signature(acmeSecret, plansPath, []byte(body)))
	answered := make(chan error, 1)
	go func() {
		resp, err := testHTTP.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered with %d before the latency passed", resp.StatusCode)
		}
		answered <- err
	}()
	for len(srv.Sandbox.Plans("acme")) == 0 {
		select {
		case err := <-answered:
			t.Fatalf("the request ended before the plan was stored: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	select {
	case err := <-answered:
		t.Fatalf("the answer did not wait for the latency: %v", err)
	default:
	}
	cancel()
	if err := <-answered; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
	// Without latency an answer leaves as soon as it is ready.
	srv.Sandbox.SetLatency(0)
	srv.as(t, acmeKey, acmeSecret).must(200, "GET", plansPath, "")
}

// TestBodyTooLarge: a declared length over the limit is refused with 413
// unread; an undeclared (chunked) body is cut at the limit with 413.
func TestBodyTooLarge(t *testing.T) {
	sb, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat(" ", maxRequestBody+1)
	for name, declared := range map[string]bool{"declared": true, "chunked": false} {
		t.Run(name, func(t *testing.T) {
			cb := newCountingBody(big, false)
			r := httptest.NewRequest("POST", plansPath, nil)
			r.Body, r.ContentLength = cb, -1
			if declared {
				r.ContentLength = int64(len(big))
			}
			r.Header.Set("X-Api-Key", acmeKey)
			r.Header.Set("Authorization", apiclient.Signature(acmeSecret, plansPath, []byte(big)))
			w := httptest.NewRecorder()
			sb.ServeHTTP(w, r)
			if w.Code != http.StatusRequestEntityTooLarge || w.Header().Get("Connection") != "close" {
				t.Errorf("status %d, Connection %q; want 413 and close", w.Code, w.Header().Get("Connection"))
			}
			if declared && cb.reads.Load() != 0 {
				t.Errorf("a body declared too large was read %d times", cb.reads.Load())
			}
		})
	}
	if n := len(sb.Plans("acme")); n != 0 {
		t.Errorf("%d plans from refused bodies", n)
	}
}

// TestTrickledBodyOnAnyRoute: a trickled body is cut off also where no
// handler reads it (the company lookup, an unknown path): the server's
// draining of the unread body stops at the body timeout.
func TestTrickledBodyOnAnyRoute(t *testing.T) {
	srv := startSandbox(t, Options{Timeouts: Timeouts{Body: 200 * time.Millisecond}})
	for _, path := range []string{"/api/companies?vat_number=4012345678", "/nowhere"} {
		conn := rawConn(t, srv)
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nx", path)
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				if _, err := conn.Write([]byte{' '}); err != nil {
					return
				}
			}
		}()
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			close(stop)
			t.Fatalf("%s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// The connection must end: the guard deadline turns a connection
		// held open by the trickle into a timeout.
		_, err = io.Copy(io.Discard, br)
		close(stop)
		if err != nil && !isReset(err) {
			t.Errorf("%s: the trickling connection was not closed: %v", path, err)
		}
	}
}
