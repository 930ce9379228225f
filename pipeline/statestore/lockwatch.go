package statestore

import (
	"context"
	"database/sql"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/stdlib"
)

// sessionSocket returns the socket of conn's PostgreSQL session, nil when
// it cannot be had (not a pgx connection, or a connection that is not a
// socket): the session is then probed before every write.
func sessionSocket(conn *sql.Conn) syscall.RawConn {
	var rc syscall.RawConn
	err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return nil
		}
		var nc net.Conn = sc.Conn().PgConn().Conn()
		if t, ok := nc.(interface{ NetConn() net.Conn }); ok {
			nc = t.NetConn() // TLS: the socket under it
		}
		if s, ok := nc.(syscall.Conn); ok {
			var err error
			rc, err = s.SyscallConn()
			return err
		}
		return nil
	})
	if err != nil {
		return nil
	}
	return rc
}

// quietSocket returns the test of a lock session's quiet (sharedCheck's
// quiet) on its socket rc: the server has sent nothing that is waiting to
// be read, and has not closed its end. A session PostgreSQL ends (by
// pg_terminate_backend, idle_session_timeout or a shutdown) sends its
// error message on its socket before it releases its locks; the end of
// the connection comes only after, as its process exits (a process that
// dies without a word has its socket closed by the kernel before the
// server can give its locks away). A proxy that loses the server closes
// its end. What pgx reads off the socket is not seen here: a probe
// leaves nothing unread in pgx (syncSession), but over TLS a message
// read together with a probe's answer stays in the TLS layer's buffer
// and is seen only when the connection ends. nil when the platform
// cannot tell (socketReadable): every check then waits for a probe.
func quietSocket(rc syscall.RawConn) func() bool {
	if rc == nil || !canPollSockets {
		return nil
	}
	return func() bool {
		readable := true
		if err := rc.Control(func(fd uintptr) { readable = socketReadable(fd) }); err != nil {
			return false // closed
		}
		return !readable
	}
}

// syncSession is the function for conn.Raw that leaves nothing pgx read
// from a lock session's socket unhandled (pgx.PgConn.SyncConn): a
// message the server sent right after a probe's answer, read with it,
// or read by pgx's background reader (started by a slow write and still
// waiting on the socket), would otherwise never be seen on the socket,
// and the session would look quiet until the connection ends, which is
// after its locks are released. Most often there is nothing to handle
// and no round trip; else a ping reads it (an ended session's error).
// A TLS connection's own buffer is not reached: see quietSocket.
func syncSession(ctx context.Context) func(any) error {
	return func(dc any) error {
		if sc, ok := dc.(*stdlib.Conn); ok {
			return sc.Conn().PgConn().SyncConn(ctx)
		}
		return nil
	}
}
