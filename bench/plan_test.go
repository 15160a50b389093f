package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

// writeBigPlan compiles y = x + c0 + c1 + c2 + c3 with four 100 MB f32
// constants and writes it to a plan file in dir.
func writeBigPlan(tb testing.TB, dir string) string {
	const n = 25 << 20 // elements per constant: 100 MiB of f32
	b := ir.NewBuilder("big")
	x := b.Input("x", ir.Float32, ir.S(n))
	y := x
	for i := 0; i < 4; i++ {
		c := ir.NewTensor(ir.Float32, []int64{n})
		c.Data[i] = 1 // not all zero
		y = b.Op("Add", y, b.Const("c"+strconv.Itoa(i), c))
	}
	b.Output("y", y)
	g, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	opts := weft.DefaultOptions()
	p, _, err := weft.Compile(g, opts)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "big.wplan")
	if err := weft.SavePlan(path, p, opts, "big"); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkOpenPlan measures "ready to run" for a ~400 MB plan: mapping
// and decoding the file and creating the session (partitions compiled,
// devices looked up). The weights are not read: their pages come in when a
// run touches them. The target is under 50 ms.
func BenchmarkOpenPlan(b *testing.B) {
	path := writeBigPlan(b, b.TempDir())
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := weft.OpenPlan(path, weft.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	b.ReportMetric(float64(fi.Size())/1e6, "MB-file")
}
