//go:build !unix

package mmapfile

import "os"

// Map reads f into memory on platforms without mmap support here.
func Map(f *os.File) ([]byte, func() error, error) { return read(f) }
