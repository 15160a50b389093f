package passes

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weftrt/weft/ir"
)

// Pass is one named step of the pipeline.
type Pass struct {
	Name string
	Fn   func(*ir.Graph, *Context) (Change, error)
	// Required passes run at every optimization level.
	Required bool
	// Level is the lowest -O level that runs a pass that is not Required.
	Level int
}

// passes is THE pipeline: every level runs a sub-list of it, in this order.
// A pass may appear more than once under different names (as "dce" and
// "lower-dce"), so that --print-after can name each occurrence.
var passes = [...]Pass{
	{Name: "infer", Fn: inferPass, Required: true},
	{Name: "identity", Fn: identityPass, Level: 1},
	{Name: "dce", Fn: dcePass, Level: 1},
	{Name: "lower", Fn: lowerPass, Level: 2},
	{Name: "lower-dce", Fn: dcePass, Level: 2}, // drops constants that lowering folded
	{Name: "fold", Fn: foldPass, Level: 1},
	{Name: "simplify", Fn: simplifyPass, Level: 1},
	{Name: "cse", Fn: csePass, Level: 1},
	{Name: "patterns", Fn: patternsPass, Level: 2},
	{Name: "convbn", Fn: convBNPass, Level: 2},
	{Name: "fuse", Fn: fusePass, Level: 2},
	{Name: "quantize", Fn: quantizePass, Required: true}, // a no-op unless Options.Quantize is set
	{Name: "hfuse", Fn: hfusePass, Level: 2},
	{Name: "final-dce", Fn: dcePass, Level: 1},
}

// passOrder lists pairs {a, b}: where both run, a must come before b.
var passOrder = [...][2]string{
	// every pass after infer relies on known dtypes and shapes.
	{"infer", "identity"},
	{"infer", "lower"},
	// bypassed Identity nodes become dead; dce removes them.
	{"identity", "dce"},
	// lower folds constants (BatchNormalization statistics) that then die.
	{"lower", "lower-dce"},
	// patterns claim LayerNorm/GELU/attention chains before fuse would
	// swallow them into generic Fused chains; convbn must see bare Convs.
	{"patterns", "fuse"},
	{"convbn", "fuse"},
	// hfuse merges FusedMatMuls, so their bias and activation must already
	// be fused; quantize must see the weights by their own names (its
	// policy and --layers pick them by name), and hfuse leaves quantized
	// weights alone.
	{"fuse", "hfuse"},
	{"quantize", "hfuse"},
	// folding makes shape arithmetic constant, which simplify and the
	// pattern matchers rely on.
	{"fold", "simplify"},
	{"fold", "patterns"},
}

// MaxLevel is the highest optimization level.
const MaxLevel = 2

// Pipeline returns the passes that run at optimization level (0..MaxLevel;
// higher levels run everything), in order.
func Pipeline(level int) []Pass {
	var out []Pass
	for _, p := range passes {
		if p.Required || p.Level <= level {
			out = append(out, p)
		}
	}
	return out
}

// Names returns the names of all passes, in pipeline order.
func Names() []string {
	names := make([]string, len(passes))
	for i, p := range passes {
		names[i] = p.Name
	}
	return names
}

// Options controls Run.
type Options struct {
	Level int // optimization level: 0, 1 or 2
	// Verify runs ir.Verify before the first pass and after every pass
	// (tests set it).
	Verify bool
	// PrintAfter names a pass; the IR text is written to Out after it runs.
	PrintAfter string
	Out        io.Writer
	// Eval evaluates one node on constant inputs (constant folding). The
	// weft package wires the CPU reference kernels in; nil disables folding.
	Eval func(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error)
	// FoldLimit caps the bytes of any tensor constant folding creates
	// (0: DefaultFoldLimit), so folding never bloats the model.
	FoldLimit int64
	// Quantize selects weight quantization (zero value: none).
	Quantize QuantizeOptions
}

// DefaultFoldLimit is the default cap on a folded constant's size.
const DefaultFoldLimit = 1 << 20

// QuantizeOptions selects weight quantization.
type QuantizeOptions struct {
	// Type is "" (none), "q8_0", "q4_0", "int8-per-channel" or another of
	// QuantTypes (q4_1, q5_0, q5_1).
	Type string
	// Policy is "all", "matmul-except-head-and-embeddings" (the default)
	// or "ffn-only"; Layers, when set, lists the weight (constant) names to
	// quantize instead.
	Policy string
	Layers []string
}

// Change reports what one pass did to the graph.
type Change struct {
	Removed    int   // nodes removed
	Added      int   // nodes added
	Fused      int   // nodes fused into others
	Rewired    int   // uses redirected to another value
	Consts     int   // constants removed (negative: added)
	Typed      int   // values whose dtype or shape became (more) known
	BytesSaved int64 // constant bytes removed (negative: added)
}

// Changed reports whether anything changed.
func (c Change) Changed() bool { return c != Change{} }

// Add accumulates d into c.
func (c *Change) Add(d Change) {
	c.Removed += d.Removed
	c.Added += d.Added
	c.Fused += d.Fused
	c.Rewired += d.Rewired
	c.Consts += d.Consts
	c.Typed += d.Typed
	c.BytesSaved += d.BytesSaved
}

func (c Change) String() string {
	if !c.Changed() {
		return "no change"
	}
	var parts []string
	add := func(n int64, what, neg string) {
		switch {
		case n > 0:
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		case n < 0:
			parts = append(parts, fmt.Sprintf("%d %s", -n, neg))
		}
	}
	add(int64(c.Removed), "removed", "")
	add(int64(c.Added), "added", "")
	add(int64(c.Fused), "fused", "")
	add(int64(c.Rewired), "rewired", "")
	add(int64(c.Consts), "consts dropped", "consts added")
	add(int64(c.Typed), "typed", "")
	add(c.BytesSaved, "bytes saved", "const bytes added")
	return strings.Join(parts, ", ")
}

// PassResult is one line of a Report.
type PassResult struct {
	Name     string
	Change   Change
	Duration time.Duration
	Nodes    int // nodes in the whole model after the pass
}

// Report collects what each pass of a Run did, in order.
type Report struct {
	Level  int
	Passes []PassResult
	// Quantized lists the weights the quantize pass quantized or skipped.
	Quantized []QuantReport
}

// Total sums the changes of all passes.
func (r *Report) Total() Change {
	var t Change
	for _, p := range r.Passes {
		t.Add(p.Change)
	}
	return t
}

// String renders the report as a table, one pass a line (durations are
// left out so that the text is deterministic; see Passes for them).
func (r *Report) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "passes -O%d:\n", r.Level)
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	for _, p := range r.Passes {
		fmt.Fprintf(tw, "  %s\t%d nodes\t%v\n", p.Name, p.Nodes, p.Change)
	}
	tw.Flush()
	writeQuantized(&sb, r.Quantized)
	return sb.String()
}

// Run runs the pipeline of opts.Level on g, modifying it in place.
func Run(g *ir.Graph, opts Options) (*Report, error) {
	pipe := Pipeline(opts.Level)
	if opts.PrintAfter != "" {
		found := false
		for _, p := range pipe {
			found = found || p.Name == opts.PrintAfter
		}
		if !found {
			for _, p := range passes {
				if p.Name == opts.PrintAfter {
					return nil, fmt.Errorf("passes: pass %q runs only at -O%d and above, not at -O%d", p.Name, p.Level, opts.Level)
				}
			}
			var names []string
			for _, p := range pipe {
				names = append(names, p.Name)
			}
			return nil, fmt.Errorf("passes: no pass %q at -O%d (passes: %s)", opts.PrintAfter, opts.Level, strings.Join(names, ", "))
		}
		if opts.Out == nil {
			return nil, fmt.Errorf("passes: PrintAfter %q without an Out writer", opts.PrintAfter)
		}
	}
	if opts.Verify {
		if err := ir.Verify(g); err != nil {
			return nil, fmt.Errorf("passes: input graph: %w", err)
		}
	}
	ctx := NewContext(g)
	ctx.Opts = opts
	rep := &Report{Level: opts.Level}
	ctx.report = rep
	for _, p := range pipe {
		start := time.Now()
		ch, err := p.Fn(g, ctx)
		if err != nil {
			return rep, fmt.Errorf("passes: %s: %w", p.Name, err)
		}
		if ch.Changed() {
			ctx.Invalidate()
		}
		rep.Passes = append(rep.Passes, PassResult{Name: p.Name, Change: ch, Duration: time.Since(start), Nodes: countNodes(g)})
		if opts.Verify {
			if err := ir.Verify(g); err != nil {
				return rep, fmt.Errorf("passes: graph invalid after %s: %w", p.Name, err)
			}
		}
		if p.Name == opts.PrintAfter {
			if _, err := fmt.Fprintf(opts.Out, "// after %s\n%s", p.Name, ir.Text(g)); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// countNodes counts the nodes of g and all its subgraphs.
// CountNodes counts the nodes of g and its subgraphs. The body of a Fused
// node is that node's definition, not extra work, so it is not counted.
func CountNodes(g *ir.Graph) int { return countNodes(g) }

func countNodes(g *ir.Graph) int {
	n := len(g.Nodes)
	for _, node := range g.Nodes {
		if node.Op == "Fused" {
			continue
		}
		for _, sg := range node.Subgraphs() {
			n += countNodes(sg)
		}
	}
	return n
}
