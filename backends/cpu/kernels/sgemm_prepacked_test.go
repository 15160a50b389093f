package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUsePackedB: panels adopted with UsePackedB multiply exactly like the
// PackedB they came from; a layout of another level, blocking or size, or
// panels of the wrong length, are refused.
func TestUsePackedB(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const M, K, N = 5, 300, 37
	a, b := make([]float32, M*K), make([]float32, K*N)
	for i := range a {
		a[i] = r.Float32() - 0.5
	}
	for i := range b {
		b[i] = r.Float32() - 0.5
	}
	p := PackB(b, N, K, N)
	l := p.Layout()
	require.Equal(t, CurrentPackLayout(K, N), l)
	require.Equal(t, l.Len(), len(p.Panels()))
	q, err := UsePackedB(p.Panels(), l)
	require.NoError(t, err)
	require.Same(t, &p.Panels()[0], &q.Panels()[0], "UsePackedB copied the panels")
	want, got := make([]float32, M*N), make([]float32, M*N)
	SgemmPacked(nil, M, a, K, p, want, N, false)
	SgemmPacked(nil, M, a, K, q, got, N, false)
	require.Equal(t, want, got)

	bad := []struct {
		name   string
		l      PackLayout
		panels []float32
	}{
		{"short", l, p.Panels()[:l.Len()-1]},
		{"other kc", PackLayout{ISA: l.ISA, NR: l.NR, KC: l.KC + 1, K: K, N: N}, p.Panels()},
		{"other nr", PackLayout{ISA: l.ISA, NR: l.NR * 2, KC: l.KC, K: K, N: N}, p.Panels()},
		{"other isa", PackLayout{ISA: l.ISA + 1, NR: l.NR, KC: l.KC, K: K, N: N}, p.Panels()},
		{"negative", PackLayout{ISA: l.ISA, NR: l.NR, KC: l.KC, K: -1, N: N}, p.Panels()},
	}
	for _, tc := range bad {
		_, err := UsePackedB(tc.panels, tc.l)
		require.Error(t, err, tc.name)
	}
}
