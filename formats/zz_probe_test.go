package formats

import (
	"fmt"
	"testing"
	"time"
)

func TestZZRead(t *testing.T) {
	done := benchPeakHeap()
	t0 := time.Now()
	c0 := benchCPUTime()
	batch, err := ReadFiles([]string{"/tmp/f20-grid3000.xlsx"}, costReadOptions())
	fmt.Println(err, len(batch.Plans), batch.Count(1), time.Since(t0), benchCPUTime()-c0, done())
	fmt.Println(firstProblems(batch.Problems))
}

func TestZZPlaces(t *testing.T) {
	path, _, _, _ := gridBoundExport(t, 2)
	batch, _ := ReadFiles([]string{path}, costReadOptions())
	tg := batch.Plans[0].Targets[0]
	fmt.Println(tg.Places != nil, len(tg.Cells), tg.Origin)
	for k, o := range tg.Cells {
		fmt.Printf("%s %#v\n", k, o)
		break
	}
}
