package mmapfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMapAndRead(t *testing.T) {
	dir := t.TempDir()
	for _, content := range [][]byte{nil, []byte("weft"), make([]byte, 1<<16+3)} {
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, content, 0o644))
		for name, fn := range map[string]func(*os.File) ([]byte, func() error, error){"map": Map, "read": read} {
			f, err := os.Open(path)
			require.NoError(t, err)
			data, unmap, err := fn(f)
			require.NoError(t, err, name)
			require.Equal(t, len(content), len(data), name)
			require.Equal(t, string(content), string(data), name)
			require.NoError(t, unmap())
			require.NoError(t, f.Close())
		}
	}
}
