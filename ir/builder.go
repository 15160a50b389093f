package ir

// Builder writes graphs by hand:
//
//	b := ir.NewBuilder("mlp")
//	x := b.Input("x", ir.Float32, ir.S(1, 4))
//	w := b.Const("w", ir.FromFloat32([]int64{4, 2}, weights))
//	y := b.Op("Relu", b.Op("MatMul", x, w))
//	b.Output("y", y)
//	g, err := b.Build()
//
// Output dtypes and shapes are left unknown; the passes package infers them.
type Builder struct {
	G *Graph
}

// NewBuilder starts a new top-level graph.
func NewBuilder(name string) *Builder { return &Builder{G: NewGraph(name)} }

// Input declares a graph input.
func (b *Builder) Input(name string, dt DType, shape Shape) *Value {
	return b.G.AddInput(name, dt, shape)
}

// Const declares a constant.
func (b *Builder) Const(name string, t *Tensor) *Value { return b.G.AddConst(name, t) }

// Op appends a single-output node. Inputs may be nil for omitted optional ones.
func (b *Builder) Op(op string, inputs ...*Value) *Value {
	return b.OpA(op, nil, inputs...)
}

// OpA appends a single-output node with attributes.
func (b *Builder) OpA(op string, attrs []AttrOption, inputs ...*Value) *Value {
	return b.OpN(op, 1, attrs, inputs...)[0]
}

// OpN appends a node with nOut outputs.
func (b *Builder) OpN(op string, nOut int, attrs []AttrOption, inputs ...*Value) []*Value {
	a := Attrs{}
	for _, o := range attrs {
		o(a)
	}
	n := b.G.AddNode(op, "", inputs, nOut, a)
	return n.Outputs
}

// Output marks v as a graph output, naming it if it has no name yet.
func (b *Builder) Output(name string, v *Value) {
	if v.Name == "" {
		v.Name = name
	}
	b.G.Outputs = append(b.G.Outputs, v)
}

// Build verifies the graph and returns it.
func (b *Builder) Build() (*Graph, error) {
	if err := Verify(b.G); err != nil {
		return nil, err
	}
	return b.G, nil
}
