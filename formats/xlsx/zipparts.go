package xlsx

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"sync"
	"unicode/utf8"
)

// ZipParts lays out and deflates the parts of n jobs, up to a few at
// once (at the fastest level, as NewZipWriter), from the moment it is
// made, and writes them to a zip writer in the jobs' order once WriteTo is
// called: a grid export's thousands of plan sheets, drawings and charts
// are built and compressed on every core, beside the rest of the
// workbook, and written in order. Until its turn, a job holds its parts
// compressed; at most pending jobs are done ahead of the writing.
type ZipParts struct {
	work  chan *zipJob
	order chan *zipJob
	wg    sync.WaitGroup // the feeder and the workers
	mu    sync.Mutex
	err   error
	used  bool // WriteTo or Close was called
}

// ZipPartSet is where a job writes its parts.
type ZipPartSet struct {
	parts []*zipPart
}

type zipJob struct {
	fn   func(*ZipPartSet) error
	set  ZipPartSet
	err  error
	done chan struct{}
}

type zipPart struct {
	name string
	raw  *bytes.Buffer // the part until it is compressed
	comp []byte        // then its deflated bytes
	size int           // uncompressed
	crc  uint32
}

var zipBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errZipPartsClosed stops the jobs of a ZipParts closed unwritten.
var errZipPartsClosed = errors.New("zip parts closed before they were written")

// NewZipParts starts running job for 0 to n-1, on workers goroutines (at
// least 1), at most pending jobs (at least 1) ahead of WriteTo; call
// WriteTo, or Close to stop them.
func NewZipParts(n, workers, pending int, job func(i int, set *ZipPartSet) error) *ZipParts {
	workers = max(workers, 1)
	p := &ZipParts{work: make(chan *zipJob), order: make(chan *zipJob, max(pending, 1))}
	p.wg.Add(workers + 1)
	go func() { // the feeder: in order
		defer p.wg.Done()
		defer close(p.order)
		defer close(p.work)
		for i := range n {
			if p.failed() != nil {
				return
			}
			j := &zipJob{fn: func(set *ZipPartSet) error { return job(i, set) }, done: make(chan struct{})}
			p.order <- j
			p.work <- j
		}
	}()
	for range workers {
		go p.worker()
	}
	return p
}

// Create returns the buffer of a new part named name, held until the part
// is compressed and written.
func (s *ZipPartSet) Create(name string) *bytes.Buffer {
	b := zipBuffers.Get().(*bytes.Buffer)
	b.Reset()
	s.parts = append(s.parts, &zipPart{name: name, raw: b})
	return b
}

// WriteTo writes every job's parts to zw in order, each under the name
// rename gives its name, and returns the first error of a job or of
// writing (the jobs after it are not run). zw must not be used meanwhile.
func (p *ZipParts) WriteTo(zw *zip.Writer, rename func(string) string) error {
	p.mu.Lock()
	used := p.used
	p.used = true
	p.mu.Unlock()
	if used {
		return errors.New("zip parts written twice")
	}
	for j := range p.order {
		<-j.done
		if j.err != nil {
			p.fail(j.err)
		}
		for _, part := range j.set.parts {
			if p.failed() == nil {
				if err := p.write(zw, part, rename(part.name)); err != nil {
					p.fail(err)
				}
			}
			part.release()
		}
	}
	p.wg.Wait()
	return p.failed()
}

// Close stops the jobs when WriteTo was not called.
func (p *ZipParts) Close() {
	p.mu.Lock()
	used := p.used
	p.used = true
	p.mu.Unlock()
	if used {
		return
	}
	p.fail(errZipPartsClosed)
	for j := range p.order {
		<-j.done
		for _, part := range j.set.parts {
			part.release()
		}
	}
	p.wg.Wait()
}

func (p *ZipParts) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *ZipParts) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// release gives the part's buffer back (a part left uncompressed by an
// error still has it).
func (part *zipPart) release() {
	if part.raw != nil {
		zipBuffers.Put(part.raw)
		part.raw = nil
	}
	part.comp = nil
}

// worker runs jobs and compresses their parts.
func (p *ZipParts) worker() {
	defer p.wg.Done()
	var fw *flate.Writer
	comp := new(bytes.Buffer)
	for j := range p.work {
		if p.failed() == nil {
			j.err = j.fn(&j.set)
		}
		for _, part := range j.set.parts {
			if j.err != nil {
				break
			}
			comp.Reset()
			if fw == nil {
				fw, _ = flate.NewWriter(comp, flate.BestSpeed) // the level is valid
			} else {
				fw.Reset(comp)
			}
			part.size, part.crc = part.raw.Len(), crc32.ChecksumIEEE(part.raw.Bytes())
			if _, err := fw.Write(part.raw.Bytes()); err != nil {
				j.err = err
			} else if err := fw.Close(); err != nil {
				j.err = err
			}
			// Held exactly: the buffers are as large as the largest part.
			part.comp = bytes.Clone(comp.Bytes())
			zipBuffers.Put(part.raw)
			part.raw = nil
		}
		close(j.done)
	}
}

func (p *ZipParts) write(zw *zip.Writer, part *zipPart, name string) error {
	fh := &zip.FileHeader{
		Name: name, Method: zip.Deflate, CRC32: part.crc,
		CompressedSize64: uint64(len(part.comp)), UncompressedSize64: uint64(part.size),
		// As zip.Writer.CreateHeader sets them.
		CreatorVersion: 20, ReaderVersion: 20,
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			fh.Flags |= 0x800 // the name is UTF-8
			break
		}
	}
	w, err := zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = w.Write(part.comp)
	return err
}
