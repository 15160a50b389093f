package cpu

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/internal/mmapfile"
)

// A packing of a mapped weight leaves the caches when its mapping is
// unmapped, even while the packing itself is still alive: a later mapping
// at the same address must never find it.
func TestPackCacheDropsUnmappedSources(t *testing.T) {
	const k, n = 64, 48
	raw := make([]byte, 4*k*n)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "w.bin")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	data, unmap, err := mmapfile.Map(f)
	require.NoError(t, err)
	w := unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), k*n)
	lo := uintptr(unsafe.Pointer(&data[0]))
	cached := func() (b, c, t int) {
		return packCache.countAt(lo), convPackCache.countAt(lo), convPackTCache.countAt(lo)
	}
	p := sharedPackB(w, n, k, n, false)
	cw := sharedConvWeights(w, n, k)
	ct := sharedConvWeightsT(w, n, k)
	b, c, tr := cached()
	require.Equal(t, 1, b, "packed-B cache entry for the mapped weight")
	require.Equal(t, 1, c, "conv cache entry for the mapped weight")
	require.Equal(t, 1, tr, "transposed conv cache entry for the mapped weight")
	require.NoError(t, unmap())
	b, c, tr = cached()
	require.Zero(t, b, "packed-B entry must leave with its mapping")
	require.Zero(t, c, "conv entry must leave with its mapping")
	require.Zero(t, tr, "transposed conv entry must leave with its mapping")
	runtime.KeepAlive(p)
	runtime.KeepAlive(cw)
	runtime.KeepAlive(ct)
}
