//go:build !unix

package gguf

import "os"

// mapFile reads f into memory on platforms without mmap support here.
func mapFile(f *os.File) ([]byte, func() error, error) { return readAll(f) }
