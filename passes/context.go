package passes

import "github.com/weftrt/weft/ir"

// Analysis is a named, cached fact about a graph, computed on demand.
type Analysis struct {
	Name string
	Run  func(g *ir.Graph, ctx *Context) any
}

// Context is what the pass manager hands to each pass: the graph being
// compiled and a cache of analyses. Run invalidates the cache after every
// pass that reports a change; a pass that edits the graph and then asks for
// an analysis again must call Invalidate itself.
type Context struct {
	G *ir.Graph
	// Opts are the options Run was called with (passes read their settings
	// here: the constant evaluator, quantization, ...).
	Opts  Options
	cache map[string]any
	// report is the Report of the running Run (nil outside Run): passes
	// add details beyond their Change to it (the quantize pass's weights).
	report *Report
}

// NewContext returns a context for g with an empty cache.
func NewContext(g *ir.Graph) *Context {
	return &Context{G: g, cache: map[string]any{}}
}

// Get returns the result of a, computing it at most once between invalidations.
func (c *Context) Get(a *Analysis) any {
	if r, ok := c.cache[a.Name]; ok {
		return r
	}
	r := a.Run(c.G, c)
	c.cache[a.Name] = r
	return r
}

// Invalidate drops every cached analysis.
func (c *Context) Invalidate() { clear(c.cache) }

// Uses returns the use lists of the whole model (the UsesAnalysis).
func (c *Context) Uses() *Uses { return c.Get(UsesAnalysis).(*Uses) }

// UsesAnalysis computes Uses.
var UsesAnalysis = &Analysis{Name: "uses", Run: func(g *ir.Graph, _ *Context) any { return ComputeUses(g) }}

// Uses records, for every value of a model, who reads it: nodes of any graph
// (a value read only inside an If branch or a Loop body is used) and graph
// outputs (of the top-level graph or of a subgraph).
type Uses struct {
	readers map[*ir.Value][]*ir.Node
	outputs map[*ir.Value][]*ir.Graph
}

// ComputeUses builds the use lists of g and its subgraphs.
func ComputeUses(g *ir.Graph) *Uses {
	u := &Uses{readers: map[*ir.Value][]*ir.Node{}, outputs: map[*ir.Value][]*ir.Graph{}}
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			for _, in := range n.Inputs {
				if in != nil {
					u.readers[in] = append(u.readers[in], n)
				}
			}
		}
		for _, o := range sg.Outputs {
			if o != nil {
				u.outputs[o] = append(u.outputs[o], sg)
			}
		}
	})
	return u
}

// Readers returns the nodes that read v (a node reading v twice is listed twice).
func (u *Uses) Readers(v *ir.Value) []*ir.Node { return u.readers[v] }

// OutputOf returns the graphs that list v among their outputs.
func (u *Uses) OutputOf(v *ir.Value) []*ir.Graph { return u.outputs[v] }

// Count is the number of reads of v: node inputs plus graph outputs.
func (u *Uses) Count(v *ir.Value) int { return len(u.readers[v]) + len(u.outputs[v]) }
