package cpu

import (
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() { registerIntoFirst(buildFastSiLUMul, "Fused") }

// siluMulBlock is the elements a task of buildFastSiLUMul's kernel
// computes: a block's SiLU stays in L1.
const siluMulBlock = 4096

// buildFastSiLUMul handles a Fused node whose body is SiLU(a)·b (either
// order of the product) over two float32 inputs of the output's shape: a
// SwiGLU, which a prefill graph's feed-forward block leaves to the fusion
// pass where the gate and up projections are separate matmuls. Each block
// runs the vector SiLU (kernels.SiLU, within a few 1e-7 of the float64
// formula) on a copy of a in the worker's scratch, then one float32
// product per element (the product of two float32s rounds as the chain
// interpreter's float64 one does), on the pool: the chain interpreter
// takes about 19 ns an element for it, in float64 per element. The
// scratch copy makes any aliasing of the output with a or b safe.
func buildFastSiLUMul(s *nodeSpec) intoKernel {
	body := s.n.AttrGraph("body")
	if body == nil || len(s.in) != 2 || len(s.out) != 1 || len(body.Inputs) != 2 || len(body.Nodes) != 2 ||
		len(body.Outputs) != 1 || len(body.Consts) != 0 || len(body.OuterRefs()) > 0 {
		return nil
	}
	silu, mul := body.Nodes[0], body.Nodes[1]
	if silu.Op != "SiLU" || len(silu.Inputs) != 1 || len(silu.Outputs) != 1 || mul.Op != "Mul" || len(mul.Inputs) != 2 ||
		len(mul.Outputs) != 1 || body.Outputs[0] != mul.Outputs[0] {
		return nil
	}
	a := slices.Index(body.Inputs, silu.Inputs[0])
	var bv *ir.Value
	switch silu.Outputs[0] {
	case mul.Inputs[0]:
		bv = mul.Inputs[1]
	case mul.Inputs[1]:
		bv = mul.Inputs[0]
	default:
		return nil
	}
	b := slices.Index(body.Inputs, bv)
	y := s.out[0]
	if a < 0 || b < 0 || a == b || y.dt != ir.Float32 {
		return nil
	}
	for _, x := range s.in {
		if !x.ok || x.dt != ir.Float32 || !slices.Equal(x.shape, y.shape) {
			return nil
		}
	}
	n := numel(y.shape)
	workers := s.pool.Workers()
	s.scratch = workers * siluMulBlock * 4
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		j := siluMulJobs.Get().(*siluMulJob)
		*j = siluMulJob{a: in[a].Float32s()[:n], b: in[b].Float32s()[:n], y: out[0].Float32s()[:n], tmp: f32View(scratch, workers*siluMulBlock)}
		if tasks := (n + siluMulBlock - 1) / siluMulBlock; tasks == 1 {
			j.Task(0, 0)
		} else {
			pool.RunTasks(tasks, j)
		}
		*j = siluMulJob{}
		siluMulJobs.Put(j)
		return nil
	}
}

// siluMulJob is one run of buildFastSiLUMul's kernel: task t computes
// block t in worker w's scratch.
type siluMulJob struct{ a, b, y, tmp []float32 }

var siluMulJobs = sync.Pool{New: func() any { return new(siluMulJob) }}

func (j *siluMulJob) Task(w, t int) {
	lo, hi := t*siluMulBlock, min(len(j.y), (t+1)*siluMulBlock)
	g := j.tmp[w*siluMulBlock : w*siluMulBlock+hi-lo]
	copy(g, j.a[lo:hi])
	kernels.SiLU(g)
	u, o := j.b[lo:hi], j.y[lo:hi]
	for i, v := range g {
		o[i] = v * u[i]
	}
}
