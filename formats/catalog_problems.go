package formats

import (
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// markCatalogProblems gives the grid reader's errors about a race, gender
// or level the catalog lacks ("... of the counter catalog") the code of an
// unknown counter, as the flat and long readers give theirs: the caller
// may read again with the service's catalog, which may have them.
func markCatalogProblems(ps pipeline.Problems) {
	for i := range ps {
		if ps[i].Severity == pipeline.Error && ps[i].Code == "" && strings.Contains(ps[i].Message, "of the counter catalog") {
			ps[i].Code = pipeline.CodeUnknownCounter
		}
	}
}
