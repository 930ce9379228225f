// Package filelock is the local default of pipeline.Locker: an OS file lock
// (flock through github.com/gofrs/flock) on a file in a folder of this
// host. The operating system releases it when the process ends, however it
// ends, so a crashed run never leaves a lock that blocks the next one and
// no process id is ever checked. The lock file's content is the holder's
// pipeline.LockInfo (pid, host, user, start time, command), read only to
// tell the next run who holds it.
package filelock
