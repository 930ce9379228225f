package pipeline

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxSmallFile bounds the small files pipeline reads whole (a counter
// catalog, a sector targets file).
const MaxSmallFile = 16 << 20

// openSmallFile opens a catalog or targets file: only a regular file (a
// named pipe would block, a device never end), read through a bound of
// maxSmallFile bytes.
func OpenSmallFile(path string) (io.ReadCloser, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, FileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &boundedFile{f: f, left: MaxSmallFile}, nil
}

// FileKind names what a path that is not a regular file is ("a named
// pipe (FIFO)", "a character device", ...), for the messages of every
// reader that accepts only regular files.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a special file"
}

var errSmallFileTooLarge = errors.New("the file is larger than 16 MiB")

// boundedFile reads a file and fails once more than left bytes came.
type boundedFile struct {
	f    *os.File
	left int64
}

func (b *boundedFile) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errSmallFileTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.f.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errSmallFileTooLarge
	}
	return n, err
}

func (b *boundedFile) Close() error { return b.f.Close() }
