// Package mmapfile maps files read-only for the readers that keep tensors
// as zero-copy slices of their file (ONNX models, GGUF files, .wplan plans).
// Where mmap is unavailable, or a filesystem refuses it, the file is read
// into a 64-byte aligned buffer instead, so callers see the same bytes
// either way. It knows nothing about file formats.
package mmapfile

import (
	"fmt"
	"io"
	"os"

	"github.com/weftrt/weft/ir"
)

// read reads all of f into a 64-byte aligned buffer.
func read(f *os.File) ([]byte, func() error, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() < 0 || int64(int(st.Size())) != st.Size() {
		return nil, nil, fmt.Errorf("file too large (%d bytes)", st.Size())
	}
	buf := ir.AlignedBytes(int(st.Size()))
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, nil, err
	}
	return buf, func() error { return nil }, nil
}
