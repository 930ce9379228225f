package xlsx

import (
	"io/fs"

	"github.com/eepipe/eepipe/pipeline"
)

// NotRegular says what a path that is not a regular file is.
func NotRegular(m fs.FileMode) string {
	return "the path is " + pipeline.FileKind(m) + ", not a regular file; eepipe reads only regular .xlsx and .csv files"
}
