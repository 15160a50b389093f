//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/internal/mmapfile"
)

// The touched bytes of a mapped file count the pages read through the
// mapping, not the file's size, and nothing for a file that is not mapped.
func TestTouchedFileBytes(t *testing.T) {
	const page, pages = 4096, 256
	path := filepath.Join(t.TempDir(), "w.bin")
	require.NoError(t, os.WriteFile(path, make([]byte, page*pages), 0o644))
	_, ok := touchedFileBytes(path)
	require.False(t, ok, "not mapped yet")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	data, unmap, err := mmapfile.Map(f)
	require.NoError(t, err)
	defer unmap()
	var sum byte
	for i := 0; i < 4; i++ {
		sum += data[i*page]
	}
	got, ok := touchedFileBytes(path)
	require.True(t, ok)
	require.GreaterOrEqual(t, got, int64(4*page), "four pages were read")
	require.LessOrEqual(t, got, int64(page*pages), "no more than the file")
	require.Zero(t, sum)
}
