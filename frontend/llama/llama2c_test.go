package llama

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkpoint writes a llama2.c file whose float k (counting from the first
// weight) is k itself, so that every weight's position can be checked.
func checkpoint(hdr [7]int32, floats int) []byte {
	var buf []byte
	for _, x := range hdr {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
	}
	for k := 0; k < floats; k++ {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(k)))
	}
	return buf
}

// sizes for dim 4, hidden 6, 2 layers, 2 heads, 1 kv head, vocab 5, seq 3:
// head 2, kv_dim 2.
var tiny = [7]int32{4, 6, 2, 2, 1, 5, 3}

const tinyFloats = 5*4 + 2*4 + 2*16 + 2*8 + 2*8 + 2*16 + 2*4 + 2*24 + 2*24 + 2*24 + 4 + 2*3*1

func TestParseLayout(t *testing.T) {
	cfg, w, err := ParseLlama2C(checkpoint(tiny, tinyFloats))
	require.NoError(t, err)
	require.Equal(t, Config{Dim: 4, HiddenDim: 6, Layers: 2, Heads: 2, KVHeads: 1, Vocab: 5, MaxSeq: 3,
		RopeTheta: 10000, NormEps: 1e-5, TiedEmbeddings: true}, cfg)
	at := func(k int) float32 { return float32(k) }
	f := w.Embed.Float32s()
	require.Equal(t, at(0), f[0])
	require.Equal(t, at(19), f[19])
	off := 20
	require.Equal(t, at(off+4), w.Layers[1].AttnNorm.Float32s()[0])
	off += 8
	// wq layer 0 is W[out=4][in=4] at off; transposed: Wq[in][out] = W[out][in].
	wq := w.Layers[0].Wq.Float32s()
	require.Equal(t, at(off+1*4+2), wq[2*4+1], "Wq[in 2][out 1] = W[out 1][in 2]")
	off += 32
	// wk layer 1: W[out=2][in=4] at off+8; Wk is [4, 2].
	require.Equal(t, []int64{4, 2}, w.Layers[1].Wk.Shape)
	require.Equal(t, at(off+8+1*4+3), w.Layers[1].Wk.Float32s()[3*2+1])
	off += 16 + 16 + 32 + 8
	// w1 layer 0: W[out=6][in=4]; W1 [4, 6].
	require.Equal(t, at(off+5*4+0), w.Layers[0].W1.Float32s()[0*6+5])
	off += 48
	// w2 layer 1: W[out=4][in=6] at off+24; W2 [6, 4].
	require.Equal(t, at(off+24+3*6+5), w.Layers[1].W2.Float32s()[5*4+3])
	off += 48 + 48
	require.Equal(t, at(off), w.FinalNorm.Float32s()[0])
	// Tied: Output is the transposed embedding.
	require.Equal(t, []int64{4, 5}, w.Output.Shape)
	require.Equal(t, f[3*4+2], w.Output.Float32s()[2*5+3])

	// Unshared: the classifier follows the RoPE tables.
	hdr := tiny
	hdr[5] = -5
	cfg, w, err = ParseLlama2C(checkpoint(hdr, tinyFloats+20))
	require.NoError(t, err)
	require.False(t, cfg.TiedEmbeddings)
	require.Equal(t, 5, cfg.Vocab)
	require.Equal(t, at(tinyFloats+3*4+2), w.Output.Float32s()[2*5+3])
}

func TestParseErrors(t *testing.T) {
	good := checkpoint(tiny, tinyFloats)
	bad := func(i int, v int32) []byte {
		h := tiny
		h[i] = v
		return checkpoint(h, tinyFloats)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than the 28-byte header"},
		{"short header", good[:20], "shorter than the 28-byte header"},
		{"truncated", good[:len(good)-4], "truncated or corrupt"},
		{"header only", good[:28], "truncated or corrupt"},
		{"trailing", append(append([]byte(nil), good...), 0, 0, 0, 0), "trailing data"},
		{"unshared without classifier", bad(5, -5), "truncated or corrupt"},
		{"zero dim", bad(0, 0), "dim is 0"},
		{"negative layers", bad(2, -1), "layers is -1"},
		{"heads do not divide dim", bad(3, 3), "not a multiple of heads"},
		{"kv heads do not divide heads", bad(4, 3), "not a multiple of kv_heads"},
		{"odd head dim", bad(3, 4), "odd"},
		{"huge", bad(1, math.MaxInt32), "implies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseLlama2C(tc.data)
			require.ErrorContains(t, err, tc.want)
		})
	}
	path := filepath.Join(t.TempDir(), "x.bin")
	_, _, err := LoadLlama2C(path)
	require.ErrorContains(t, err, "x.bin")
	require.NoError(t, os.WriteFile(path, good[:100], 0o644))
	_, _, err = LoadLlama2C(path)
	require.ErrorContains(t, err, "x.bin")
	require.ErrorContains(t, err, "truncated")
}

func TestLoadStories(t *testing.T) {
	const path = "../../../shared/models/stories260K.bin"
	if _, err := os.Stat(path); os.IsNotExist(err) {
		t.Skipf("%s is absent (the shared test models are not checked out)", path)
	}
	cfg, w, err := LoadLlama2C(path)
	require.NoError(t, err)
	require.Equal(t, Config{Dim: 64, HiddenDim: 172, Layers: 5, Heads: 8, KVHeads: 4, Vocab: 512, MaxSeq: 512,
		RopeTheta: 10000, NormEps: 1e-5, TiedEmbeddings: true}, cfg)
	require.NoError(t, w.Check(cfg))
}
