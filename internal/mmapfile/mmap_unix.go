//go:build unix

package mmapfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Map maps f read-only and returns its bytes and a function that unmaps
// them. Nothing is read here: pages come in as they are touched. A
// zero-length file maps to an empty slice.
func Map(f *os.File) ([]byte, func() error, error) {
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
		return read(f)
	}
	return data, func() error {
		notifyUnmap(data)
		return unix.Munmap(data)
	}, nil
}
