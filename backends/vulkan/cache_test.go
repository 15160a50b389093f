//go:build cgo

package vulkan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPipelineCacheFile(t *testing.T) {
	d := testDevice(t)
	planPath := filepath.Join(t.TempDir(), "m.wplan")
	path := CachePath(planPath, d.name)
	require.Equal(t, planPath+".vkcache", path)
	require.Contains(t, d.LoadCache(planPath), "no pipeline cache")

	_, err := d.pipeline("matmul") // at least one pipeline in the cache
	require.NoError(t, err)
	require.NoError(t, d.SaveCache(planPath))
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	// Vulkan's header at least (lavapipe keeps no pipelines in its cache:
	// its data is the 32-byte header alone).
	require.GreaterOrEqual(t, len(file), cacheHeader+32, "weft's header, Vulkan's header, data")

	note := d.LoadCache(planPath)
	require.Contains(t, note, "loaded")
	loaded, n2, ok := PipelineCache(d)
	require.True(t, ok)
	require.Equal(t, note, n2)
	require.Equal(t, len(file)-cacheHeader, loaded, "the whole cache data is merged")
	t.Logf("%s (%d bytes on disk)", note, len(file))

	// A cache from another device (here: another UUID) is ignored with a
	// note, and the next save replaces it.
	foreign := append([]byte{}, file...)
	foreign[24] ^= 0xff
	require.NoError(t, os.WriteFile(path, foreign, 0o644))
	note = d.LoadCache(planPath)
	require.Contains(t, note, "ignored")
	require.Contains(t, note, "made for vendor")
	loaded, _, _ = PipelineCache(d)
	require.Zero(t, loaded)
	require.NoError(t, d.SaveCache(planPath))
	require.Contains(t, d.LoadCache(planPath), "loaded")
}

func TestDecodeCache(t *testing.T) {
	id := cacheIdentity{vendor: 0x10005, device: 7, driver: 3, uuid: [16]byte{1, 2, 3}}
	vkHeader := func(vendor, device uint32, uuid [16]byte) []byte {
		h := make([]byte, 40)
		h[0] = 32
		h[4] = 1
		for i := range 4 {
			h[8+i], h[12+i] = byte(vendor>>(8*i)), byte(device>>(8*i))
		}
		copy(h[16:32], uuid[:])
		return h
	}
	good := encodeCache(id, vkHeader(id.vendor, id.device, id.uuid))
	data, err := decodeCache(id, good)
	require.NoError(t, err)
	require.Len(t, data, 40)

	other := id
	other.driver = 4
	corrupt := append([]byte{}, good...)
	corrupt[len(corrupt)-1] ^= 1
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "not a weft pipeline cache"},
		{"magic", append([]byte("XXXXXXXX"), good[8:]...), "not a weft pipeline cache"},
		{"version", func() []byte { b := append([]byte{}, good...); b[8] = 9; return b }(), "format version 9"},
		{"other driver", encodeCache(other, vkHeader(id.vendor, id.device, id.uuid)), "driver 0x4"},
		{"truncated", good[:len(good)-3], "truncated"},
		{"checksum", corrupt, "checksum mismatch"},
		{"short vulkan header", encodeCache(id, make([]byte, 16)), "less than its header"},
		{"vulkan header version", encodeCache(id, make([]byte, 32)), "version 0"},
		{"vulkan header device", encodeCache(id, vkHeader(id.vendor, 8, id.uuid)), "names another device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeCache(id, c.file)
			require.ErrorContains(t, err, c.want)
		})
	}
	require.Equal(t, "a.wplan.vulkan2.vkcache", CachePath("a.wplan", "vulkan:2"))
}
