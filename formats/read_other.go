//go:build !unix

package formats

// readOpenFlags adds nothing where O_NONBLOCK does not exist.
const readOpenFlags = 0
