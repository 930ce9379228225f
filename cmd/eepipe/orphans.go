package main

import (
	"time"

	"go.uber.org/zap"

	"github.com/eepipe/eepipe/formats/xlsx"
)

// removeOrphanTemps removes the temporary files that killed runs left in
// --output-dir (xlsx.RemoveOrphanTemps says which are removed), once
// the run holds the folder's lock.
func (r *scheduledRun) removeOrphanTemps() {
	if r.opts.OutputDir == "" {
		return
	}
	removed, err := xlsx.RemoveOrphanTemps(r.opts.OutputDir, "", time.Now())
	if err != nil {
		r.f.Logger().Warn("removing orphaned temporary files failed", zap.Error(err))
	}
	for _, p := range removed {
		r.f.Logger().Info("removed a temporary file a killed run left", zap.String("file", p))
	}
}
