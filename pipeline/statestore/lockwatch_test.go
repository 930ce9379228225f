package statestore

import (
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestSharedCheckTrustsAQuietSessionBriefly: a probe's answer serves the
// callers that ask within fresh after it began while the session is
// quiet; a caller that asks when the session is not quiet, or once fresh
// has passed, waits for a probe that starts after it asked; a failed
// probe is every later answer.
func TestSharedCheckTrustsAQuietSessionBriefly(t *testing.T) {
	var probes atomic.Int32
	var quiet atomic.Bool
	var fail atomic.Bool
	lost := errors.New("lost")
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	c := &sharedCheck{
		probe: func() error {
			probes.Add(1)
			if fail.Load() {
				return lost
			}
			return nil
		},
		quiet: quiet.Load,
		fresh: time.Second,
		now:   func() time.Time { return time.Unix(0, clock.Load()) },
	}
	quiet.Store(true)
	check := func(wantProbes int32, what string) {
		t.Helper()
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := probes.Load(); n != wantProbes {
			t.Fatalf("%s: %d probes, want %d", what, n, wantProbes)
		}
	}
	check(1, "the first check") // nothing confirmed yet
	for range 100 {
		check(1, "a quiet session within a second of its probe")
	}
	quiet.Store(false) // the server sent something, or hung up
	check(2, "a session that is not quiet")
	check(3, "still not quiet")
	quiet.Store(true)
	check(3, "quiet again, probe fresh")
	clock.Add(int64(999 * time.Millisecond))
	check(3, "999 ms after the probe")
	clock.Add(int64(time.Millisecond))
	check(4, "a second after the probe")
	check(4, "the new probe serves")
	fail.Store(true)
	clock.Add(int64(time.Second))
	if err := c.do(); err != lost {
		t.Fatalf("a failed probe answered %v", err)
	}
	clock.Add(-int64(time.Second)) // even within fresh of the last good probe
	if err := c.do(); err != lost {
		t.Fatalf("after a failure: %v", err)
	}
}

// TestQuietSocket: a socket is quiet while its peer has sent nothing
// unread and has not closed its end.
func TestQuietSocket(t *testing.T) {
	if !canPollSockets {
		t.Skip("this platform cannot poll a socket: every check is a probe")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	rc, err := client.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	quiet := quietSocket(rc)
	// Wait until what the peer did has reached the socket.
	want := func(q bool, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for quiet() != q {
			if time.Now().After(deadline) {
				t.Fatalf("%s: quiet is %v, want %v", what, !q, q)
			}
			time.Sleep(time.Millisecond)
		}
	}
	want(true, "a fresh connection")
	if _, err := server.Write([]byte{'E'}); err != nil {
		t.Fatal(err)
	}
	want(false, "a message waiting")
	if _, err := client.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	want(true, "the message read")
	server.Close()
	want(false, "the peer closed its end")
	client.Close()
	if quiet() {
		t.Fatal("a closed socket is quiet")
	}
	if quietSocket(nil) != nil {
		t.Fatal("no socket: a check must probe")
	}
}

// TestSharedCheckDoubtWaitsForALaterProbe: once a caller found the
// session not quiet, a later caller is not answered at once even if the
// socket looks quiet again (the probe under way may have read the
// server's last message and not yet said so): it waits for a probe, and
// hears the loss that probe finds.
func TestSharedCheckDoubtWaitsForALaterProbe(t *testing.T) {
	var probes atomic.Int32
	var quiet atomic.Bool
	lost := errors.New("lost")
	started := make(chan struct{})
	release := make(chan error)
	c := &sharedCheck{
		probe: func() error {
			if probes.Add(1) == 1 {
				return nil
			}
			started <- struct{}{}
			return <-release
		},
		quiet: quiet.Load,
		fresh: time.Hour,
	}
	quiet.Store(true)
	if err := c.do(); err != nil || probes.Load() != 1 {
		t.Fatalf("the first check: %v, %d probes", err, probes.Load())
	}
	quiet.Store(false) // the server's message arrives
	first := make(chan error, 1)
	go func() { first <- c.do() }()
	<-started         // the probe it asked for is under way...
	quiet.Store(true) // ...and has read the message
	second := make(chan error, 1)
	go func() { second <- c.do() }()
	for waiting := false; !waiting; { // until it waits for the next probe
		select {
		case err := <-second:
			t.Fatalf("a caller that asked while the probe was under way was answered at once: %v", err)
		case <-time.After(time.Millisecond):
		}
		c.mu.Lock()
		waiting = c.next != nil
		c.mu.Unlock()
	}
	release <- lost // the probe reports the loss
	if err := <-first; err != lost {
		t.Fatalf("the caller that found the session not quiet: %v", err)
	}
	if err := <-second; err != lost {
		t.Fatalf("a caller that asked while that probe was under way: %v, want the loss", err)
	}
}
