// Package pace is eepipe's one home of "wait and retry", in the shape of
// rclone's lib/pacer: a call is a series of attempts, a Schedule says how
// long to wait before each repeat, and a Pacer runs the attempts and the
// waits between them.
//
// The rules every loop of eepipe follows through it:
//
//   - An attempt is repeated only when its caller declares it safe to
//     repeat (Verdict.Repeatable): a request that may have been applied is
//     never sent blindly again.
//   - A server-provided wait (Retry-After) is honoured, capped at
//     Pacer.MaxRetryAfter, in place of the schedule's.
//   - Waits end at once when the call's context, or Pacer.WaitCtx, ends;
//     no further attempt is started then, and the call returns an
//     *Interrupted holding the last attempt's error and the context's.
//   - The clock and the wait are injected (Pacer.Now, Pacer.Sleep; a type
//     that waits holds them as a Clock), so tests run without real time
//     passing (pacetest.Clock).
//
// Schedules: Exponential (capped doubling, the bounds of
// github.com/cenkalti/backoff's ExponentialBackOff), Jittered with
// FullJitter (a random wait up to each bound), and Fixed (polling at a
// steady interval; Fixed(0) repeats at once). Clock.Poll is the Pacer of
// a poll: Fixed to a deadline, ending with an *OutOfTime.
//
// The package imports no package of this module, so that both the wire
// client (apiclient) and the domain (pipeline), which may not import each
// other, use it: apiclient's retry policy, pipeline's wait for a running
// recalculation, pipeline's resend of a create that got no clear answer,
// and the polls for a held lock (filelock's lock file and its holder's
// record, statestore's advisory locks and its busy SQLite file) are all
// Pacer calls; the periodic waits (a lock session's heartbeat, apply's
// progress log, the sandbox's latency) are Sleep.
package pace
