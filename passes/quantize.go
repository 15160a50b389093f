package passes

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// Weight quantization.
//
// quantizePass replaces the constant weight of a MatMul, FusedMatMul or
// (untransposed-A, alpha = beta = 1) Gemm by a quantized copy read by
// QMatMul (ir/ops.go):
//
//	MatMul(X, B[K,N])                 -> QMatMul(X, Wq[N,K] [, Scales[N]])
//	FusedMatMul(X, B, Bias){act}      -> act(Add(QMatMul(X, Wq), Bias))
//	Gemm(X, B, C){transB}             -> Add(QMatMul(X, Wq), C)
//
// Wq is Bᵀ (B itself for Gemm with transB) quantized along K: 32-element
// blocks in a GGUF layout (q8_0, q4_0, q4_1, q5_0, q5_1; K must be a
// multiple of 32), or int8 with one scale per output row
// (int8-per-channel; any K). The last new node takes over the original
// output value, so readers, names and graph outputs stay as they were.
//
// Which weights: the policy (QuantizeOptions) picks among the eligible
// ones; a weight that cannot be quantized, or that the policy leaves out,
// is listed in the report with the reason, never an error. A weight read
// by several nodes is quantized once and shared; its float copy is dropped
// when nothing else reads it. The report gives each weight's relative
// error (MSE / mean square of the original) so that sensitive layers show.

// QuantReport is one line of the quantize pass's report: a weight it
// quantized, or one it considered and skipped.
type QuantReport struct {
	Weight string  // the constant's name
	Node   string  // the (first) node that reads it as a weight
	Shape  []int64 // the weight's shape as stored in the model
	Type   string  // the scheme ("q4_0", "int8-per-channel", ...)
	// BytesBefore and BytesAfter are the weight's storage before and
	// after (quantized data plus scales).
	BytesBefore, BytesAfter int64
	// RelErr is Σ(w − deq(q(w)))² / Σ w²: MSE over the mean square.
	RelErr float64
	// Skipped says why the weight was left as it is ("" when quantized).
	Skipped string
	// KeptFloat is set when the float weight stays as well, because other
	// nodes (a Gather of a tied embedding, a skipped product) read it.
	KeptFloat bool
}

// Policy names (QuantizeOptions.Policy).
const (
	PolicyAll     = "all"
	PolicyDefault = "matmul-except-head-and-embeddings"
	PolicyFFNOnly = "ffn-only"
)

// QuantTypes lists the accepted QuantizeOptions.Type values.
var QuantTypes = []string{"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "int8-per-channel"}

// quantScheme is a parsed QuantizeOptions.Type: a block dtype, or Int8 for
// per-channel int8.
type quantScheme struct {
	name string
	dt   ir.DType
}

// suffix is appended to a weight's name to name its quantized copy
// ("_q4_0", "_int8"); the text form needs identifier characters.
func (s quantScheme) suffix() string { return "_" + s.dt.String() }

func parseQuantType(s string) (quantScheme, error) {
	s = strings.ToLower(s)
	if s == "int8-per-channel" {
		return quantScheme{s, ir.Int8}, nil
	}
	if dt, err := ir.ParseDType(s); err == nil && quant.Supported(dt) && slices.Contains(QuantTypes, s) {
		return quantScheme{s, dt}, nil
	}
	return quantScheme{}, fmt.Errorf("unknown quantization type %q (want one of %s)", s, strings.Join(QuantTypes, ", "))
}

func quantizePass(g *ir.Graph, ctx *Context) (Change, error) {
	if ctx.Opts.Quantize.Type == "" {
		return Change{}, nil
	}
	reps, ch, err := quantizeGraph(g, ctx.Uses(), ctx.Opts.Quantize)
	if ctx.report != nil {
		ctx.report.Quantized = append(ctx.report.Quantized, reps...)
	}
	return ch, err
}

// Quantize runs the quantize pass on g alone (after InferShapes) and
// returns its per-weight report. opts.Type must be set.
func Quantize(g *ir.Graph, opts QuantizeOptions) ([]QuantReport, Change, error) {
	if opts.Type == "" {
		return nil, Change{}, fmt.Errorf("passes: quantize: no quantization type (want one of %s)", strings.Join(QuantTypes, ", "))
	}
	return quantizeGraph(g, ComputeUses(g), opts)
}

// qcand is a node that reads a constant as its weight operand.
type qcand struct {
	n     *ir.Node
	g     *ir.Graph // the node's graph
	w     *ir.Value // the constant weight
	trans bool      // w is already [N, K] (Gemm with transB)
	k, nn int64     // the product's inner and output dims
	skip  string    // why it cannot be quantized ("" when it can)
}

// weightMatMul reports whether n is a matrix product whose second operand
// is a constant (a weight), whatever its type.
func weightMatMul(n *ir.Node) bool {
	switch n.Op {
	case "MatMul", "FusedMatMul", "Gemm":
		return n.In(1).IsConst()
	}
	return false
}

// candidate describes n (a weightMatMul) and checks that it can be quantized.
func candidate(n *ir.Node, g *ir.Graph, s quantScheme) *qcand {
	c := &qcand{n: n, g: g, w: n.In(1)}
	wt := c.w.Const
	if len(wt.Shape) == 2 {
		c.k, c.nn = wt.Shape[0], wt.Shape[1]
		if n.Op == "Gemm" && n.AttrInt("transB", 0) != 0 {
			c.trans = true
			c.k, c.nn = c.nn, c.k
		}
	}
	x := n.In(0)
	switch {
	case len(n.Outputs) != 1:
		c.skip = fmt.Sprintf("%s with %d outputs", n.Op, len(n.Outputs))
	case wt.DType != ir.Float32 && wt.DType != ir.Float16 && wt.DType != ir.BFloat16:
		c.skip = fmt.Sprintf("weight is %v (want f32, f16 or bf16)", wt.DType)
	case len(wt.Shape) != 2:
		c.skip = fmt.Sprintf("weight has rank %d (want 2)", len(wt.Shape))
	case x == nil || (x.DType.Valid() && x.DType != wt.DType):
		c.skip = fmt.Sprintf("input is %v, weight %v", x.DType, wt.DType)
	case x.Shape != nil && len(x.Shape) == 0:
		c.skip = "scalar input"
	case c.k == 0 || c.nn == 0:
		c.skip = "empty weight"
	case s.dt != ir.Int8 && c.k%quant.BlockSize != 0:
		c.skip = fmt.Sprintf("K = %d is not a multiple of %d", c.k, quant.BlockSize)
	case n.Op == "Gemm":
		c.skip = gemmSkip(n)
	case n.Op == "FusedMatMul":
		if _, ok := activations[n.AttrString("activation", "")]; !ok {
			c.skip = fmt.Sprintf("FusedMatMul activation %q", n.AttrString("activation", ""))
		}
	}
	if c.skip == "" && !finite(wt) {
		c.skip = "weight holds NaN or Inf"
	}
	return c
}

// gemmSkip says why a Gemm cannot become QMatMul (+ Add C); -O2 lowers the
// other forms to MatMul first.
func gemmSkip(n *ir.Node) string {
	beta := n.AttrFloat("beta", 1)
	switch {
	case n.AttrInt("transA", 0) != 0:
		return "Gemm with transA"
	case n.AttrFloat("alpha", 1) != 1:
		return "Gemm with alpha != 1"
	case n.In(2) != nil && beta != 1 && beta != 0:
		return "Gemm with beta != 1"
	}
	return ""
}

func finite(t *ir.Tensor) bool {
	for i := 0; i < t.Len(); i++ {
		if v := t.Float64(i); math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// encoded is a quantized weight, shared by every node reading the same
// constant the same way.
type encoded struct {
	wq, scales *ir.Value
	relErr     float64
}

// newConst returns a constant value of g that is not yet in g.Consts: the
// pass adds its constants only once nothing can fail any more, so that an
// error leaves the graph as it was.
func newConst(g *ir.Graph, name string, t *ir.Tensor) *ir.Value {
	v := g.NewValue(name, t.DType, ir.ShapeOf(t.Shape))
	v.Const = t
	return v
}

// encKey identifies a weight as read by a node: Gemm with transB reads
// its constant already transposed.
type encKey struct {
	w     *ir.Value
	trans bool
}

func quantizeGraph(g *ir.Graph, uses *Uses, opts QuantizeOptions) ([]QuantReport, Change, error) {
	s, err := parseQuantType(opts.Type)
	if err != nil {
		return nil, Change{}, fmt.Errorf("passes: quantize: %w", err)
	}
	var cands []*qcand
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			if weightMatMul(n) {
				cands = append(cands, candidate(n, sg, s))
			}
		}
	})
	if err := selectWeights(g, uses, cands, opts); err != nil {
		return nil, Change{}, fmt.Errorf("passes: quantize: %w", err)
	}

	// One report line per weight, in model order.
	var reps []*QuantReport
	byWeight := map[*ir.Value]*QuantReport{}
	note := func(c *qcand) *QuantReport {
		r := byWeight[c.w]
		if r == nil {
			r = &QuantReport{Weight: c.w.Name, Node: prefix(c.n), Shape: slices.Clone(c.w.Const.Shape),
				Type: s.name, BytesBefore: int64(len(c.w.Const.Data)), Skipped: c.skip}
			byWeight[c.w] = r
			reps = append(reps, r)
		}
		return r
	}

	var ch Change
	var added []*ir.Value // new constants, committed at the end
	enc := map[encKey]*encoded{}
	replace := map[*ir.Node][]*ir.Node{}
	for _, c := range cands {
		r := note(c)
		if c.skip != "" {
			continue
		}
		key := encKey{c.w, c.trans}
		e := enc[key]
		if e == nil {
			if e, err = encodeWeight(c, s); err != nil {
				return nil, Change{}, fmt.Errorf("passes: quantize: weight %q: %w", c.w.Name, err)
			}
			if e.wq == nil {
				if r.Skipped == "" {
					r.Skipped = "values out of the range of the format's scales"
				}
				continue
			}
			enc[key] = e
			for _, v := range []*ir.Value{e.wq, e.scales} {
				if v != nil {
					added = append(added, v)
					r.BytesAfter += int64(len(v.Const.Data))
				}
			}
			r.RelErr = e.relErr
		}
		r.Skipped = ""
		nodes, consts, err := rewriteQuantized(c, e)
		if err != nil {
			return nil, Change{}, fmt.Errorf("passes: quantize: node %v: %w", c.n, err)
		}
		added = append(added, consts...)
		replace[c.n] = nodes
		ch.Removed++
		ch.Added += len(nodes)
	}
	if len(replace) == 0 {
		return reportLines(reps), ch, nil
	}

	// Commit: the new constants, the new nodes in place of the old ones.
	for _, v := range added {
		v.Graph.Consts = append(v.Graph.Consts, v)
		ch.Consts--
		ch.BytesSaved -= int64(len(v.Const.Data))
	}
	g.Walk(func(sg *ir.Graph) {
		var nodes []*ir.Node
		for _, n := range sg.Nodes {
			if r, ok := replace[n]; ok {
				nodes = append(nodes, r...)
			} else {
				nodes = append(nodes, n)
			}
		}
		sg.Nodes = nodes
	})
	// Drop the float weights nothing reads any more.
	after := ComputeUses(g)
	for key := range enc {
		w := key.w
		if !slices.Contains(w.Graph.Consts, w) {
			continue // the other reading of the same constant dropped it
		}
		if after.Count(w) > 0 {
			byWeight[w].KeptFloat = true
			continue
		}
		w.Graph.Consts = slices.DeleteFunc(w.Graph.Consts, func(v *ir.Value) bool { return v == w })
		ch.Consts++
		ch.BytesSaved += int64(len(w.Const.Data))
	}
	return reportLines(reps), ch, nil
}

func reportLines(reps []*QuantReport) []QuantReport {
	out := make([]QuantReport, len(reps))
	for i, r := range reps {
		out[i] = *r
	}
	return out
}

// floatMatrix returns the weight as the [N, K] float32 matrix QMatMul
// reads: Bᵀ of MatMul's [K, N] operand.
func floatMatrix(c *qcand) []float32 {
	t := c.w.Const
	n, k := int(c.nn), int(c.k)
	out := make([]float32, n*k)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			src := j*n + i // B[j, i]
			if c.trans {
				src = i*k + j
			}
			out[i*k+j] = float32(t.Float64(src))
		}
	}
	return out
}

// encodeWeight quantizes c's weight into new (uncommitted) constants of
// the graph that holds the weight; it leaves wq nil when the format cannot
// represent the weight (a block scale beyond f16's range).
func encodeWeight(c *qcand, s quantScheme) (*encoded, error) {
	w := floatMatrix(c)
	shape := []int64{c.nn, c.k}
	f := ir.FromFloat32(shape, w)
	var (
		wq, sc *ir.Tensor
		deq    *ir.Tensor
		err    error
	)
	if s.dt == ir.Int8 {
		if wq, sc, err = quant.QuantizePerChannel(f); err == nil {
			deq, err = quant.DequantizePerChannel(wq, sc)
		}
	} else if wq, err = quant.Quantize(f, s.dt); err == nil {
		deq, err = quant.Dequantize(wq)
	}
	if err != nil {
		return nil, err
	}
	e := &encoded{relErr: quant.RelError(w, deq.Float32s())}
	if math.IsNaN(e.relErr) || math.IsInf(e.relErr, 0) {
		return e, nil // an f16 block scale overflowed: leave the weight alone
	}
	name := c.w.Name
	if name == "" {
		name = prefix(c.n) + "_weight"
	}
	e.wq = newConst(c.w.Graph, name+s.suffix(), wq)
	if sc != nil {
		e.scales = newConst(c.w.Graph, name+"_scales", sc)
	}
	return e, nil
}

// activations maps FusedMatMul's activation attribute to the op (and
// attribute) that computes it after QMatMul.
var activations = map[string]string{
	"": "", "Relu": "Relu", "LeakyRelu": "LeakyRelu", "Sigmoid": "Sigmoid", "Tanh": "Tanh",
	"Gelu": "Gelu", "GeluTanh": "Gelu", "SiLU": "SiLU", "Clip": "Clip",
}

// rewriteQuantized returns the nodes that replace c.n: QMatMul, then the
// bias or C addition and the activation of FusedMatMul/Gemm. The last one
// writes c.n's output value. It also returns the constants it added.
func rewriteQuantized(c *qcand, e *encoded) ([]*ir.Node, []*ir.Value, error) {
	n, y := c.n, c.n.Outputs[0]
	var post []func(prev *ir.Value, out *ir.Value) *ir.Node
	var consts []*ir.Value
	mk := func(op, name string, attrs ir.Attrs, out *ir.Value, inputs ...*ir.Value) *ir.Node {
		if attrs == nil {
			attrs = ir.Attrs{}
		}
		m := &ir.Node{Name: name, Op: op, Inputs: inputs, Attrs: attrs, Outputs: []*ir.Value{out}}
		out.Producer = m
		return m
	}
	if bias := n.In(2); bias != nil && (n.Op == "FusedMatMul" || (n.Op == "Gemm" && n.AttrFloat("beta", 1) != 0)) {
		post = append(post, func(prev, out *ir.Value) *ir.Node {
			return mk("Add", prefix(n)+"/bias", nil, out, prev, bias)
		})
	}
	if n.Op == "FusedMatMul" {
		if act := n.AttrString("activation", ""); act != "" {
			op := activations[act]
			attrs := ir.Attrs{}
			var extra []*ir.Value
			switch act {
			case "LeakyRelu":
				if n.Has("activation_alpha") {
					attrs["alpha"] = n.Attrs["activation_alpha"]
				}
			case "GeluTanh":
				attrs["approximate"] = &ir.Attr{Kind: ir.AttrString, Str: "tanh"}
			case "Clip":
				bound := func(attr string) *ir.Value {
					if !n.Has(attr) {
						return nil
					}
					t := ir.NewTensor(c.w.Const.DType, nil) // X, W and Y share the dtype
					t.SetFloat64(0, float64(n.AttrFloat(attr, 0)))
					v := newConst(c.g, prefix(n)+"_"+strings.TrimPrefix(attr, "activation_"), t)
					consts = append(consts, v)
					return v
				}
				extra = []*ir.Value{bound("activation_alpha"), bound("activation_beta")}
			}
			post = append(post, func(prev, out *ir.Value) *ir.Node {
				return mk(op, prefix(n)+"/"+strings.ToLower(act), attrs, out, append([]*ir.Value{prev}, extra...)...)
			})
		}
	}
	result := func(last bool) *ir.Value {
		if last {
			return y
		}
		return c.g.NewValue("", ir.Invalid, nil)
	}
	inputs := []*ir.Value{n.In(0), e.wq}
	if e.scales != nil {
		inputs = append(inputs, e.scales)
	}
	nodes := []*ir.Node{mk("QMatMul", n.Name, nil, result(len(post) == 0), inputs...)}
	for i, p := range post {
		nodes = append(nodes, p(nodes[len(nodes)-1].Outputs[0], result(i == len(post)-1)))
	}
	// Type the new intermediate values; the last one is y, already typed.
	s := newState()
	for _, m := range nodes {
		if err := s.node(m); err != nil {
			return nil, nil, fmt.Errorf("%v: %w", m, err)
		}
		if o := m.Outputs[0]; o != y && !o.DType.Valid() {
			o.DType, o.Shape = m.Inputs[0].DType, m.Inputs[0].Shape.Clone() // elementwise ops without inference
		}
	}
	return nodes, consts, nil
}

// writeQuantized renders the quantize report as a table (nothing when the
// pass did not run): one weight a line, with the total of bytes saved.
func writeQuantized(w io.Writer, reps []QuantReport) {
	if len(reps) == 0 {
		return
	}
	fmt.Fprintf(w, "quantized weights:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  weight\tshape\ttype\tbytes\t\trel. error\n")
	var before, after int64
	for _, r := range reps {
		name := r.Weight
		if name == "" {
			name = "(" + r.Node + ")"
		}
		shape := strings.Trim(strings.ReplaceAll(fmt.Sprint(r.Shape), " ", "x"), "[]")
		if r.Skipped != "" {
			fmt.Fprintf(tw, "  %s\t%s\t-\t%d\t\tskipped: %s\n", name, shape, r.BytesBefore, r.Skipped)
			continue
		}
		before += r.BytesBefore
		after += r.BytesAfter
		kept := ""
		if r.KeptFloat {
			after += r.BytesBefore
			kept = "  (float copy kept for other readers)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t-> %d\t%.3e%s\n", name, shape, r.Type, r.BytesBefore, r.BytesAfter, r.RelErr, kept)
	}
	tw.Flush()
	if before > 0 {
		fmt.Fprintf(w, "  quantized %d -> %d bytes (%.1f%%)\n", before, after, 100*float64(after)/float64(before))
	}
}
