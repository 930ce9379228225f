package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSandboxPortInUse: a sandbox whose address is taken says what to do
// (another program holds it; --listen 127.0.0.1:0 picks a free port), not
// only the system's "address already in use".
func TestSandboxPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out, errb strings.Builder
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, Now: time.Now, Getenv: func(string) string { return "" }}
	code := Execute(context.Background(), f, []string{"--log-format", "console", "sandbox", "--listen", l.Addr().String()})
	if code != ExitFatal || !strings.Contains(errb.String(), "holds "+l.Addr().String()+"; stop it, or give --listen 127.0.0.1:0") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
}
