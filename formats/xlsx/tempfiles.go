package xlsx

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// Temporary files of WriteFileAtomic. A run killed while writing leaves
// its temporary file behind; later runs remove such orphans, but only
// files that are certainly eepipe's and certainly not in use:
//
//   - the name is exactly one WriteFileAtomic makes: "." + the output's
//     name + ".tmp-" + the writer's process id + "." + a tag of the
//     writer's host (8 hex digits) + "-" + random digits (or, from earlier
//     versions, ".tmp-" + random digits alone);
//   - it is a regular file (not a link, not a folder);
//   - it was written by a process of this host that is gone (no process
//     of that id runs here: a run killed while writing, removed by the very
//     next run), or it was last written more than OrphanTempMaxAge ago (the
//     process id may have been reused; no write takes a day). A file of
//     another host sharing the folder, or without a process id, is removed
//     only after OrphanTempMaxAge. OrphanTempAge is kept for callers; a
//     dead writer's file is an orphan at any age.
//
// A live writer keeps its file's modification time fresh as it writes,
// and its process id alive.
const (
	OrphanTempAge    = 10 * time.Minute
	OrphanTempMaxAge = 24 * time.Hour
)

// orphanTempName matches the temporary names of WriteFileAtomic: the
// output's name, the writer's pid (absent in earlier versions) and the
// random digits of os.CreateTemp.
var orphanTempName = regexp.MustCompile(`^\.(.+)\.tmp-(?:(\d{1,10})\.([0-9a-f]{8})-)?(\d+)$`)

// tempHostTag tags this host in temporary names: the FNV-1a hash of its
// name, so that a process id is only ever checked on the host that wrote it.
var tempHostTag = func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}()

// atomicTempPattern is the os.CreateTemp pattern of WriteFileAtomic for an
// output named base.
func atomicTempPattern(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "." + tempHostTag + "-*"
}

// RemoveOrphanTemps removes the temporary files that killed runs of
// eepipe left in dir (see OrphanTempAge for which), of every output name,
// or only of the output named base when base is not "". It returns the
// paths removed; now is the current time.
func RemoveOrphanTemps(dir, base string, now time.Time) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("remove orphaned temporary files in %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		m := orphanTempName.FindStringSubmatch(e.Name())
		if m == nil || (base != "" && m[1] != base) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		age := now.Sub(info.ModTime())
		pid, _ := strconv.Atoi(m[2])
		here := m[3] == tempHostTag
		orphan := age > OrphanTempMaxAge ||
			(here && pid > 0 && pid != os.Getpid() && !tempWriterAlive(pid))
		if !orphan {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
