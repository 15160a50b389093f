//go:build unix

package gguf

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps f read-only. It returns the bytes and an unmap function; a
// zero-length file maps to an empty slice.
func mapFile(f *os.File) ([]byte, func() error, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, os.ErrInvalid
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		// Some filesystems cannot be mapped; read the file instead.
		return readAll(f)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
