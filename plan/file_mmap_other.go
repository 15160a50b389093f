//go:build !unix

package plan

import "os"

// mapFile reads f into memory on platforms without mmap support here.
func mapFile(f *os.File) ([]byte, func() error, error) { return readAll(f) }
