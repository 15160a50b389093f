//go:build !unix

package mmapfile

import "os"

// Map reads f into memory on platforms without mmap support here.
func Map(f *os.File) ([]byte, func() error, error) { return read(f) }

// Release does nothing here (Map reads files into memory): it reports
// false.
func Release([]byte) bool { return false }

// Prefault does nothing here.
func Prefault([]byte) {}
