package plan_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// tinyPlan is the smallest useful plan: y = relu(x + c) on one device.
func tinyPlan(t testing.TB) *plan.Plan {
	b := ir.NewBuilder("tiny")
	x := b.Input("x", ir.Float32, ir.S(2))
	c := b.Const("c", ir.FromFloat32([]int64{2}, []float32{1, -1}))
	b.Output("y", b.Op("Relu", b.Op("Add", x, c)))
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Graph: g, Partitions: []*plan.Partition{{Device: "cpu", Nodes: g.Nodes,
		Inputs: []*ir.Value{x, c}, Outputs: g.Outputs}}}
	for _, n := range g.Nodes {
		p.Buffers = append(p.Buffers, plan.Buffer{Value: n.Outputs[0], Device: "cpu", Bytes: 8, Offset: -1})
	}
	return p
}

// FuzzDecode feeds arbitrary bytes to the decoder, both as they are (which
// mostly exercises the header checks) and with their checksums recomputed
// (which reaches the section decoders). Decoding must never panic, must
// fail only with a FormatError, and a plan that decodes must write and
// decode again to the same graph.
func FuzzDecode(f *testing.F) {
	for _, p := range []*plan.Plan{tinyPlan(f), samplePlan(f)} {
		var buf bytes.Buffer
		if err := plan.Write(&buf, p, map[string]string{"producer": "fuzz"}); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), false)
		f.Add(buf.Bytes(), true)
	}
	pp, packed := samplePacked(f)
	var buf bytes.Buffer
	if err := plan.WritePrepacked(&buf, pp, map[string]string{"producer": "fuzz"}, packed); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), false)
	f.Add(buf.Bytes(), true)
	f.Add([]byte(plan.Magic), true)
	f.Fuzz(func(t *testing.T, data []byte, restamp bool) {
		b := bytes.Clone(data)
		if restamp {
			plan.Restamp(b)
		}
		pf, err := plan.Decode(b, "fuzz.wplan")
		if err != nil {
			var fe *plan.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a FormatError: %v", err)
			}
			return
		}
		_ = pf.VerifyWeights()
		var out bytes.Buffer
		if err := plan.WritePrepacked(&out, pf.Plan, pf.Meta, pf.Prepacked); err != nil {
			t.Fatalf("a decoded plan does not write: %v", err)
		}
		again, err := plan.Decode(out.Bytes(), "again")
		if err != nil {
			t.Fatalf("a rewritten plan does not decode: %v", err)
		}
		if a, b := ir.Text(pf.Plan.Graph), ir.Text(again.Plan.Graph); a != b {
			t.Fatalf("graph changed on rewrite:\n%s\nvs\n%s", a, b)
		}
		if len(pf.Prepacked) != len(again.Prepacked) {
			t.Fatalf("%d prepacked blobs became %d on rewrite", len(pf.Prepacked), len(again.Prepacked))
		}
		for i, pk := range pf.Prepacked {
			if q := again.Prepacked[i]; q.Device != pk.Device || q.Desc != pk.Desc || q.Value.Name != pk.Value.Name || !bytes.Equal(q.Data, pk.Data) {
				t.Fatalf("prepacked blob %d changed on rewrite", i)
			}
		}
	})
}
