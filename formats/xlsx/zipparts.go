package xlsx

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"sync"
	"unicode/utf8"
)

// ZipParts writes parts to a zip writer in the order their jobs were
// added, while up to a few jobs lay their parts out and deflate them at
// once (at the fastest level, as NewZipWriter): a grid export's thousands
// of plan sheets, drawings and charts are built and compressed on every
// core while the file is written in order. Each part is held, laid out
// and compressed, until its turn: a few jobs' worth at most.
//
// The zip writer must not be used from Add to Close.
type ZipParts struct {
	zw    *zip.Writer
	work  chan *zipJob
	order chan *zipJob
	wg    sync.WaitGroup // the workers
	done  chan struct{}  // closed when the writer has written every job
	mu    sync.Mutex
	err   error
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
	name      string
	raw, comp *bytes.Buffer
	crc       uint32
}

var zipBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// NewZipParts starts writing parts to zw with workers jobs at once
// (at least 1).
func NewZipParts(zw *zip.Writer, workers int) *ZipParts {
	workers = max(workers, 1)
	p := &ZipParts{zw: zw, work: make(chan *zipJob), order: make(chan *zipJob, 2*workers), done: make(chan struct{})}
	p.wg.Add(workers)
	for range workers {
		go p.worker()
	}
	go p.writer()
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

// Add queues job, which writes its parts with Create; they are written
// after the parts of every job added before it. It returns the first
// error of a job or of writing so far (then job is not run).
func (p *ZipParts) Add(job func(*ZipPartSet) error) error {
	if err := p.failed(); err != nil {
		return err
	}
	j := &zipJob{fn: job, done: make(chan struct{})}
	p.order <- j
	p.work <- j
	return nil
}

// Close waits until every part is written and returns the first error of
// a job or of writing.
func (p *ZipParts) Close() error {
	close(p.work)
	close(p.order)
	p.wg.Wait()
	<-p.done
	return p.failed()
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

// worker runs jobs and compresses their parts.
func (p *ZipParts) worker() {
	defer p.wg.Done()
	var fw *flate.Writer
	for j := range p.work {
		if p.failed() == nil {
			j.err = j.fn(&j.set)
		}
		for _, part := range j.set.parts {
			if j.err != nil {
				break
			}
			part.comp = zipBuffers.Get().(*bytes.Buffer)
			part.comp.Reset()
			if fw == nil {
				fw, _ = flate.NewWriter(part.comp, flate.BestSpeed) // the level is valid
			} else {
				fw.Reset(part.comp)
			}
			part.crc = crc32.ChecksumIEEE(part.raw.Bytes())
			if _, err := fw.Write(part.raw.Bytes()); err != nil {
				j.err = err
			} else if err := fw.Close(); err != nil {
				j.err = err
			}
		}
		close(j.done)
	}
}

// writer writes the jobs' parts in order, once each job is done.
func (p *ZipParts) writer() {
	defer close(p.done)
	for j := range p.order {
		<-j.done
		if j.err != nil {
			p.fail(j.err)
		}
		for _, part := range j.set.parts {
			if p.failed() == nil {
				if err := p.write(part); err != nil {
					p.fail(err)
				}
			}
			zipBuffers.Put(part.raw)
			if part.comp != nil {
				zipBuffers.Put(part.comp)
			}
		}
	}
}

func (p *ZipParts) write(part *zipPart) error {
	fh := &zip.FileHeader{
		Name: part.name, Method: zip.Deflate, CRC32: part.crc,
		CompressedSize64: uint64(part.comp.Len()), UncompressedSize64: uint64(part.raw.Len()),
		// As zip.Writer.CreateHeader sets them.
		CreatorVersion: 20, ReaderVersion: 20,
	}
	for i := 0; i < len(part.name); i++ {
		if part.name[i] >= utf8.RuneSelf {
			fh.Flags |= 0x800 // the name is UTF-8
			break
		}
	}
	w, err := p.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = w.Write(part.comp.Bytes())
	return err
}
