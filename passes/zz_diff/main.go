// Temporary differential check -O0 vs -O2 (deleted before hand-off).
package main

import (
	"context"
	"fmt"
	"math"
	"math/rand"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

func rnd(r *rand.Rand, dt ir.DType, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, r.Float64()*2-1)
	}
	return t
}

func build(seed int64, dt ir.DType) (*ir.Graph, map[string]*ir.Tensor) {
	r := rand.New(rand.NewSource(seed))
	b := ir.NewBuilder("d")
	m, k, n := int64(1+r.Intn(5)), int64(1+r.Intn(5)), int64(1+r.Intn(5))
	ta, tb := r.Intn(2), r.Intn(2)
	ash := []int64{m, k}
	if ta == 1 {
		ash = []int64{k, m}
	}
	bsh := []int64{k, n}
	if tb == 1 {
		bsh = []int64{n, k}
	}
	x := b.Input("a", dt, ir.S(ash...))
	var bv *ir.Value
	feeds := map[string]*ir.Tensor{"a": rnd(r, dt, ash...)}
	if r.Intn(2) == 0 {
		bv = b.Const("w", rnd(r, dt, bsh...))
	} else {
		bv = b.Input("w", dt, ir.S(bsh...))
		feeds["w"] = rnd(r, dt, bsh...)
	}
	var c *ir.Value
	switch r.Intn(4) {
	case 0:
		c = b.Const("c", rnd(r, dt, n))
	case 1:
		c = b.Input("c", dt, ir.S(m, 1))
		feeds["c"] = rnd(r, dt, m, 1)
	case 2:
		c = b.Const("c", rnd(r, dt, m, n))
	}
	alpha := []float32{1, 0.5, -2}[r.Intn(3)]
	beta := []float32{1, 0, 3}[r.Intn(3)]
	y := b.OpA("Gemm", []ir.AttrOption{ir.Int("transA", int64(ta)), ir.Int("transB", int64(tb)), ir.Float("alpha", alpha), ir.Float("beta", beta)}, x, bv, c)
	// BN over [m, n] viewed as [1, m, n] (channels = m)
	u := b.Op("Unsqueeze", y, b.Const("ax", ir.FromInt64([]int64{1}, []int64{0})))
	st := func(pos bool) *ir.Value {
		t := rnd(r, ir.Float32, m)
		if pos {
			for i := 0; i < t.Len(); i++ {
				t.SetFloat64(i, math.Abs(t.Float64(i))+0.1)
			}
		}
		return b.Const("", t)
	}
	bn := b.OpA("BatchNormalization", []ir.AttrOption{ir.Float("epsilon", 1e-3)}, u, st(false), st(false), st(false), st(true))
	b.Output("y", bn)
	return b.G, feeds
}

func run(seed int64, dt ir.DType, lvl int) (*ir.Tensor, error) {
	g, feeds := build(seed, dt)
	o := weft.DefaultOptions()
	o.OptLevel = lvl
	o.Verify = true
	mdl, err := weft.New(g, o)
	if err != nil {
		return nil, err
	}
	defer mdl.Close()
	if seed == 1 && dt == ir.Float16 && lvl == 2 {
		fmt.Print(mdl.Report)
	}
	out, err := mdl.Run(context.Background(), feeds)
	if err != nil {
		return nil, err
	}
	return out["y"], nil
}

func main() {
	worst := 0.0
	for seed := int64(0); seed < 300; seed++ {
		for _, dt := range []ir.DType{ir.Float32, ir.Float64, ir.Float16} {
			a, err := run(seed, dt, 0)
			if err != nil {
				fmt.Println("O0", seed, dt, err)
				continue
			}
			b, err := run(seed, dt, 2)
			if err != nil {
				fmt.Println("O2", seed, dt, err)
				continue
			}
			tol := 1e-5
			if dt == ir.Float16 {
				tol = 2e-2
			}
			for i := 0; i < a.Len(); i++ {
				d := math.Abs(a.Float64(i) - b.Float64(i))
				rel := d / math.Max(1, math.Abs(a.Float64(i)))
				if dt != ir.Float16 && rel > worst {
					worst = rel
				}
				if rel > tol {
					fmt.Println("MISMATCH", seed, dt, i, a.Float64(i), b.Float64(i))
					break
				}
			}
		}
	}
	fmt.Println("done; worst rel diff f32/f64:", worst)
}
