//go:build cgo

package vulkan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// opCase is one differential test: a node run on the device and with the
// CPU reference kernel on the same random inputs.
type opCase struct {
	op    string
	attrs []ir.AttrOption
	ins   []operand
	tol   float64 // 0: 2e-5
}

func (c opCase) name() string {
	s := c.op
	for _, o := range c.ins {
		s += fmt.Sprint(o.shape)
		if o.isConst {
			s += "c"
		}
	}
	return s
}

func runCases(t *testing.T, cases []opCase) {
	d := testDevice(t)
	for i, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			g, vals := oneNode(t, uint64(i+1), c.op, c.attrs, c.ins...)
			require.NoError(t, d.Supports(g.Nodes[0]))
			want := reference(t, g, vals)
			got := onDevice(t, d, g, vals)
			tol := c.tol
			if tol == 0 {
				tol = 2e-5
			}
			for _, o := range g.Outputs {
				requireClose(t, want[o], got[o], tol, c.name())
			}
		})
	}
}

func TestBinary(t *testing.T) {
	shapes := [][2]operand{
		{in(3, 5), in(3, 5)},
		{in(3, 5), in()},                          // scalar
		{in(5, 7), in(1, 7)},                      // row
		{in(5, 1), in(1, 7)},                      // outer
		{in(2, 1, 5), in(3, 1)},                   // rank 3 both ways
		{in(7), in(4, 1, 7)},                      // lower rank left
		{in(2, 1, 3, 1, 2, 3), in(2, 1, 3, 1, 1)}, // rank 6
		{in(3, 301), konst(301)},                  // constant, more than one workgroup
		{in(1), in(1000)},
	}
	var cases []opCase
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		for _, s := range shapes {
			b := s[1]
			if op == "Div" {
				b.awayOf0 = true
			}
			cases = append(cases, opCase{op: op, ins: []operand{s[0], b}})
		}
	}
	runCases(t, cases)
}

func TestUnary(t *testing.T) {
	var cases []opCase
	for _, op := range []string{"Relu", "Sigmoid", "Tanh", "Gelu", "SiLU", "Exp"} {
		cases = append(cases,
			opCase{op: op, ins: []operand{in(7, 13)}},
			opCase{op: op, ins: []operand{wide(3, 301)}},
		)
	}
	cases = append(cases,
		opCase{op: "Gelu", attrs: []ir.AttrOption{ir.Str("approximate", "tanh")}, ins: []operand{wide(5, 67)}},
		opCase{op: "Gelu", attrs: []ir.AttrOption{ir.Str("approximate", "tanh")}, ins: []operand{in(1)}},
	)
	runCases(t, cases)
}

func TestSoftmax(t *testing.T) {
	runCases(t, []opCase{
		{op: "Softmax", ins: []operand{in(5, 7)}},
		{op: "Softmax", ins: []operand{wide(2, 3, 130)}},
		{op: "Softmax", ins: []operand{in(1, 1)}},
		{op: "Softmax", attrs: []ir.AttrOption{ir.Int("axis", 2)}, ins: []operand{in(2, 3, 300)}},
		{op: "Softmax", attrs: []ir.AttrOption{ir.Int("legacy_axis", 1), ir.Int("axis", 1)}, ins: []operand{in(2, 3, 4)}},
	})
}

func TestNorm(t *testing.T) {
	eps := ir.Float("epsilon", 1e-3)
	runCases(t, []opCase{
		{op: "LayerNormalization", ins: []operand{in(4, 10), in(10), in(10)}},
		{op: "LayerNormalization", attrs: []ir.AttrOption{eps}, ins: []operand{wide(2, 3, 17), konst(17)}},
		{op: "LayerNormalization", attrs: []ir.AttrOption{ir.Int("axis", 1)}, ins: []operand{in(2, 3, 4), konst(3, 4), konst(1, 3, 4)}},
		{op: "LayerNormalization", ins: []operand{in(3, 300), in(300), absent}},
		{op: "RMSNormalization", ins: []operand{in(3, 33), in(33)}},
		{op: "RMSNormalization", attrs: []ir.AttrOption{ir.Int("axis", -2), eps}, ins: []operand{in(2, 5, 7), konst(5, 7)}},
		{op: "RMSNormalization", ins: []operand{wide(1, 257), konst(257)}},
	})
}

func TestTranspose(t *testing.T) {
	perm := func(p ...int64) []ir.AttrOption { return []ir.AttrOption{ir.Ints("perm", p...)} }
	runCases(t, []opCase{
		{op: "Transpose", ins: []operand{in(2, 3)}},
		{op: "Transpose", attrs: perm(1, 0, 2), ins: []operand{in(2, 3, 4)}},
		{op: "Transpose", attrs: perm(3, 1, 0, 2), ins: []operand{in(2, 3, 4, 5)}},
		{op: "Transpose", attrs: perm(5, 0, 4, 1, 3, 2), ins: []operand{in(2, 1, 3, 2, 1, 3)}},
		{op: "Transpose", attrs: perm(1, 0), ins: []operand{konst(17, 33)}},
	})
}

func TestMatMul(t *testing.T) {
	tol := 1e-4
	var cases []opCase
	for _, s := range [][2]operand{
		{in(5, 7), in(7, 3)},
		{in(1, 64), konst(64, 64)},
		{in(64, 64), in(64, 64)},
		{in(17, 33), in(33, 9)},
		{in(7), in(7, 5)},             // 1-D A
		{in(4, 7), in(7)},             // 1-D B
		{in(7), in(7)},                // both 1-D
		{in(2, 3, 5, 4), in(4, 6)},    // batched A
		{in(3, 4), in(2, 4, 5)},       // batched B
		{in(2, 1, 5, 4), in(3, 4, 6)}, // broadcast batch dims
		{in(2, 3, 1, 2, 3, 4), in(1, 3, 2, 1, 4, 2)},
	} {
		cases = append(cases, opCase{op: "MatMul", ins: s[:], tol: tol})
	}
	act := func(a string, more ...ir.AttrOption) []ir.AttrOption {
		return append([]ir.AttrOption{ir.Str("activation", a)}, more...)
	}
	cases = append(cases,
		opCase{op: "FusedMatMul", ins: []operand{in(5, 7), konst(7, 3), konst(3)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("Relu"), ins: []operand{in(17, 20), konst(20, 19), konst(19)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("Gelu"), ins: []operand{in(6, 8), in(8, 5), in(6, 1)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("SiLU"), ins: []operand{in(2, 3, 4), in(4, 5), in(2, 1, 5)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("Sigmoid"), ins: []operand{in(3, 9), in(9, 4)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("Tanh"), ins: []operand{in(7), in(7, 4)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("GeluTanh"), ins: []operand{in(3, 9), in(9, 4), in()}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("LeakyRelu", ir.Float("activation_alpha", 0.2)), ins: []operand{in(3, 9), in(9, 4), in(4)}, tol: tol},
		opCase{op: "FusedMatMul", attrs: act("Clip", ir.Float("activation_alpha", -0.5), ir.Float("activation_beta", 0.7)), ins: []operand{in(3, 9), in(9, 4), in(3, 4)}, tol: tol},
	)
	runCases(t, cases)
}
