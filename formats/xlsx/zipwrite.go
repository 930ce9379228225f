package xlsx

import (
	"archive/zip"
	"compress/flate"
	"io"
)

// NewZipWriter returns a zip writer to w whose deflated parts are
// compressed at the fastest level by one flate writer reused from part to
// part (zip writes one part at a time): the default level took half the
// CPU of a grid export for a file a fifth smaller, and a new flate writer
// per part costs more than a small part's data. The workbooks eepipe
// streams (grid exports, reconcile copies) are written through it.
func NewZipWriter(w io.Writer) *zip.Writer {
	zw := zip.NewWriter(w)
	var fw *flate.Writer
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		if fw == nil {
			var err error
			if fw, err = flate.NewWriter(out, flate.BestSpeed); err != nil {
				return nil, err
			}
			return fw, nil
		}
		fw.Reset(out)
		return fw, nil
	})
	return zw
}
