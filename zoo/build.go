package zoo

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// mb builds one model: an ir.Builder plus exporter-style naming and seeded
// weights.
type mb struct {
	b      *ir.Builder
	seed   int64
	counts map[string]int // node names used, for unique suffixes
	nconst int
}

func newMB(name string, seed int64) *mb {
	return &mb{b: ir.NewBuilder(name), seed: seed, counts: map[string]int{}}
}

// op appends node op under the module path scope ("/layer1/layer1.0/conv1")
// named as torch.onnx names nodes: scope/Op, scope/Op_1, ...; its output is
// named after the node.
func (m *mb) op(scope, op string, attrs []ir.AttrOption, inputs ...*ir.Value) *ir.Value {
	name := scope + "/" + op
	if k := m.counts[name]; k > 0 {
		m.counts[name] = k + 1
		name += "_" + strconv.Itoa(k)
	} else {
		m.counts[name] = 1
	}
	v := m.b.OpA(op, attrs, inputs...)
	v.Producer.Name = name
	v.Name = name + "_output_0"
	return v
}

// opN is op with n outputs.
func (m *mb) opN(scope, op string, n int, attrs []ir.AttrOption, inputs ...*ir.Value) []*ir.Value {
	name := scope + "/" + op
	if k := m.counts[name]; k > 0 {
		m.counts[name] = k + 1
		name += "_" + strconv.Itoa(k)
	} else {
		m.counts[name] = 1
	}
	outs := m.b.OpN(op, n, attrs, inputs...)
	outs[0].Producer.Name = name
	for i, v := range outs {
		v.Name = name + "_output_" + strconv.Itoa(i)
	}
	return outs
}

// konst adds a non-weight constant (shape vectors, scalars) named like the
// exporter's folded constants.
func (m *mb) konst(t *ir.Tensor) *ir.Value {
	m.nconst++
	return m.b.Const("onnx::Constant_"+strconv.Itoa(m.nconst), t)
}

func (m *mb) i64s(vals ...int64) *ir.Value {
	return m.konst(ir.FromInt64([]int64{int64(len(vals))}, vals))
}

func (m *mb) i64(v int64) *ir.Value { return m.konst(ir.FromInt64([]int64{}, []int64{v})) }

func (m *mb) f32(v float32) *ir.Value { return m.konst(ir.FromFloat32([]int64{}, []float32{v})) }

// rng returns the generator for the tensor called name: seeded by the model
// seed and the name, so each weight is independent of build order.
func (m *mb) rng(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(m.seed), h.Sum64()))
}

// uniform adds a weight of the given shape, uniform in [lo, hi).
func (m *mb) uniform(name string, lo, hi float32, shape ...int64) *ir.Value {
	t := ir.NewTensor(ir.Float32, shape)
	r := m.rng(name)
	f := t.Float32s()
	span := hi - lo
	for i := range f {
		f[i] = lo + span*r.Float32()
	}
	return m.b.Const(name, t)
}

// sym returns a dim: the symbol when symbolic, else the size.
func sym(symbolic bool, name string, size int) ir.Dim {
	if symbolic {
		return ir.Sym(name)
	}
	return ir.Dim{Size: int64(size)}
}

// output marks v as the graph output called name.
func (m *mb) output(name string, v *ir.Value) {
	v.Name = name
	m.b.Output(name, v)
}

// build verifies the graph; a failure is a bug in this package.
func (m *mb) build() (*ir.Graph, error) {
	g, err := m.b.Build()
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: built graph does not verify: %w", m.b.G.Name, err)
	}
	g.Opsets = map[string]int64{"": 17}
	g.Meta = map[string]string{"producer_name": "weft zoo"}
	return g, nil
}

// linear is torch's Linear on input of rank > 2 as exported: MatMul with the
// transposed weight [in, out], then Add(bias, ·).
func (m *mb) linear(scope, param string, x *ir.Value, in, out int, bias bool) *ir.Value {
	bound := float32(math.Sqrt(3.0 / float64(in))) // variance 1/in
	w := m.uniform(param+".weight", -bound, bound, int64(in), int64(out))
	y := m.op(scope, "MatMul", nil, x, w)
	if !bias {
		return y
	}
	b := m.uniform(param+".bias", -0.02, 0.02, int64(out))
	return m.op(scope, "Add", nil, b, y)
}

// layerNorm is LayerNorm over the last axis as exported before opset 17:
// ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul γ, Add β.
func (m *mb) layerNorm(scope, param string, x *ir.Value, hidden int, eps float32) *ir.Value {
	gamma := m.uniform(param+".weight", 0.9, 1.1, int64(hidden))
	beta := m.uniform(param+".bias", -0.05, 0.05, int64(hidden))
	keep := []ir.AttrOption{ir.Int("keepdims", 1)}
	mean := m.op(scope, "ReduceMean", keep, x, m.i64s(-1))
	d := m.op(scope, "Sub", nil, x, mean)
	sq := m.op(scope, "Pow", nil, d, m.f32(2))
	v := m.op(scope, "ReduceMean", keep, sq, m.i64s(-1))
	ve := m.op(scope, "Add", nil, v, m.f32(eps))
	s := m.op(scope, "Sqrt", nil, ve)
	n := m.op(scope, "Div", nil, d, s)
	y := m.op(scope, "Mul", nil, n, gamma)
	return m.op(scope, "Add", nil, y, beta)
}

// dimOf returns dim i of x as a 1-element i64 vector computed at run time
// (Shape, Gather, Unsqueeze), as exporters write dynamic shapes.
func (m *mb) dimOf(scope string, x *ir.Value, i int64) *ir.Value {
	s := m.op(scope, "Shape", nil, x)
	d := m.op(scope, "Gather", []ir.AttrOption{ir.Int("axis", 0)}, s, m.i64(i))
	return m.op(scope, "Unsqueeze", nil, d, m.i64s(0))
}
