package ir

import (
	"fmt"
	"sort"
)

// AttrKind is the type of an attribute value.
type AttrKind uint8

// Attribute kinds.
const (
	AttrInt AttrKind = iota + 1
	AttrFloat
	AttrString
	AttrInts
	AttrFloats
	AttrStrings
	AttrTensor
	AttrGraph
	AttrGraphs
)

// Attr is one node attribute. Exactly the field that Kind names is set.
type Attr struct {
	Kind    AttrKind
	Int     int64
	Float   float32
	Str     string
	Ints    []int64
	Floats  []float32
	Strings []string
	Tensor  *Tensor
	Graph   *Graph
	Graphs  []*Graph
}

// Attrs maps attribute names to values.
type Attrs map[string]*Attr

// Names returns the attribute names in sorted order (for deterministic output).
func (a Attrs) Names() []string {
	names := make([]string, 0, len(a))
	for k := range a {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (a *Attr) String() string {
	switch a.Kind {
	case AttrInt:
		return fmt.Sprint(a.Int)
	case AttrFloat:
		return fmt.Sprint(a.Float)
	case AttrString:
		return fmt.Sprintf("%q", a.Str)
	case AttrInts:
		return fmt.Sprint(a.Ints)
	case AttrFloats:
		return fmt.Sprint(a.Floats)
	case AttrStrings:
		return fmt.Sprintf("%q", a.Strings)
	case AttrTensor:
		return "tensor<" + a.Tensor.String() + ">"
	case AttrGraph:
		return "graph<" + a.Graph.Name + ">"
	case AttrGraphs:
		return fmt.Sprintf("graphs<%d>", len(a.Graphs))
	}
	return "<bad attr>"
}

// AttrOption sets an attribute; used with Builder.Op.
type AttrOption func(Attrs)

// Int sets an int attribute.
func Int(name string, v int64) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrInt, Int: v} }
}

// Float sets a float attribute.
func Float(name string, v float32) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrFloat, Float: v} }
}

// Str sets a string attribute.
func Str(name, v string) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrString, Str: v} }
}

// Ints sets an ints attribute.
func Ints(name string, v ...int64) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrInts, Ints: append([]int64{}, v...)} }
}

// Floats sets a floats attribute.
func Floats(name string, v ...float32) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrFloats, Floats: append([]float32{}, v...)} }
}

// TensorAttr sets a tensor attribute.
func TensorAttr(name string, t *Tensor) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrTensor, Tensor: t} }
}

// GraphAttr sets a subgraph attribute (If branches, Loop and Scan bodies).
func GraphAttr(name string, g *Graph) AttrOption {
	return func(a Attrs) { a[name] = &Attr{Kind: AttrGraph, Graph: g} }
}

// Has reports whether the node has the attribute.
func (n *Node) Has(name string) bool { _, ok := n.Attrs[name]; return ok }

// AttrInt returns an int attribute, or def when absent.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrInt {
		return a.Int
	}
	return def
}

// AttrFloat returns a float attribute, or def when absent.
func (n *Node) AttrFloat(name string, def float32) float32 {
	if a, ok := n.Attrs[name]; ok {
		switch a.Kind {
		case AttrFloat:
			return a.Float
		case AttrInt:
			return float32(a.Int)
		}
	}
	return def
}

// AttrString returns a string attribute, or def when absent.
func (n *Node) AttrString(name, def string) string {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrString {
		return a.Str
	}
	return def
}

// AttrInts returns an ints attribute, or def when absent.
func (n *Node) AttrInts(name string, def []int64) []int64 {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrInts {
		return a.Ints
	}
	return def
}

// AttrFloats returns a floats attribute, or def when absent.
func (n *Node) AttrFloats(name string, def []float32) []float32 {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrFloats {
		return a.Floats
	}
	return def
}

// AttrStrings returns a strings attribute, or def when absent.
func (n *Node) AttrStrings(name string, def []string) []string {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrStrings {
		return a.Strings
	}
	return def
}

// AttrTensor returns a tensor attribute, or nil.
func (n *Node) AttrTensor(name string) *Tensor {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrTensor {
		return a.Tensor
	}
	return nil
}

// AttrGraph returns a subgraph attribute, or nil.
func (n *Node) AttrGraph(name string) *Graph {
	if a, ok := n.Attrs[name]; ok && a.Kind == AttrGraph {
		return a.Graph
	}
	return nil
}
