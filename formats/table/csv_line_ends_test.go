package table

import (
	"os"
	"strings"
	"testing"
)

// TestCSVCRReader: the CR reader turns line ends outside quoted values into
// LF, whatever size the reads are.
func TestCSVCRReader(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a,b\rc,d\r", "a,b\nc,d\n"},
		{"a,b\r\nc,d\re", "a,b\nc,d\ne"},
		{"a,\"x\ry\"\rc,\"q\"\"\r\"\r", "a,\"x\ry\"\nc,\"q\"\"\r\"\n"},
		{"a,b\"c\rd", "a,b\"c\nd"},           // a quote inside an unquoted value opens nothing
		{"\"a\r\nb\"\r\r", "\"a\r\nb\"\n\n"}, // CR LF inside quotes stays; an empty line stays a line
	} {
		for _, size := range []int{1, 2, 64} {
			r := &csvCRReader{r: &crTestChunks{s: tc.in, n: size}, fieldStart: true}
			var sb strings.Builder
			buf := make([]byte, size)
			for {
				n, err := r.Read(buf)
				sb.Write(buf[:n])
				if err != nil {
					break
				}
			}
			if sb.String() != tc.want {
				t.Errorf("%q in reads of %d: got %q, want %q", tc.in, size, sb.String(), tc.want)
			}
		}
	}
}

// crTestChunks reads s at most n bytes at a time.
type crTestChunks struct {
	s string
	n int
}

func (c *crTestChunks) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, os.ErrClosed
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
