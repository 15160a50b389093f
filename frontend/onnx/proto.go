package onnx

import (
	"fmt"
)

// This file decodes the ONNX protobuf messages (onnx.proto, IR version 10)
// into plain structs. Only the fields weft uses are kept; byte fields such as
// raw_data stay subslices of the input buffer. Field numbers are ONNX's.

// maxDepth bounds subgraph nesting (If inside Loop inside ...) so that hostile
// input cannot exhaust the stack.
const maxDepth = 64

type kv struct{ key, value string }

type opsetID struct {
	domain  string
	version int64
}

type modelProto struct {
	irVersion       int64
	opsets          []opsetID
	producer        string
	producerVersion string
	domain          string
	modelVersion    int64
	doc             string
	graph           *graphProto
	meta            []kv
	nFunctions      int
}

type graphProto struct {
	name        string
	nodes       []*nodeProto
	inits       []*tensorProto
	nSparseInit int
	inputs      []*valueInfoProto
	outputs     []*valueInfoProto
	valueInfo   []*valueInfoProto
}

type nodeProto struct {
	inputs  []string
	outputs []string
	name    string
	op      string
	domain  string
	attrs   []*attrProto
}

// ONNX AttributeProto.AttributeType values.
const (
	atUndefined    = 0
	atFloat        = 1
	atInt          = 2
	atString       = 3
	atTensor       = 4
	atGraph        = 5
	atFloats       = 6
	atInts         = 7
	atStrings      = 8
	atTensors      = 9
	atGraphs       = 10
	atSparseTensor = 11
	atSparseTens   = 12
	atTypeProto    = 13
	atTypeProtos   = 14
)

type attrProto struct {
	name        string
	refAttrName string
	typ         int32
	f           float32
	i           int64
	s           []byte
	t           *tensorProto
	g           *graphProto
	floats      []float32
	ints        []int64
	strings     [][]byte
	tensors     []*tensorProto
	graphs      []*graphProto
	// presence of each singular field (for IR v1 attributes without a type)
	hasF, hasI, hasS, hasSparse, hasTP bool
	nSparse, nTP                       int
}

type tensorProto struct {
	dims       []int64
	dataType   int32
	hasSegment bool
	floatData  []uint32 // float bits
	int32Data  []int64
	nString    int
	int64Data  []int64
	name       string
	raw        []byte
	hasRaw     bool
	external   []kv
	location   int32
	doubleData []uint64 // double bits
	uint64Data []int64
}

type valueInfoProto struct {
	name string
	typ  *typeProto
}

// Kinds of TypeProto values.
const (
	typeNone = iota
	typeTensor
	typeSequence
	typeMap
	typeOptional
	typeSparse
)

var typeKindName = [...]string{"none", "tensor", "sequence", "map", "optional", "sparse tensor"}

type typeProto struct {
	kind     int
	elemType int32
	shape    []dimProto // nil: no shape
	hasShape bool
}

type dimProto struct {
	value    int64
	param    string
	hasValue bool
}

func decodeModel(b []byte) (*modelProto, error) {
	m := &modelProto{}
	err := walk(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			m.irVersion, err = f.int64()
		case 2:
			m.producer, err = f.str()
		case 3:
			m.producerVersion, err = f.str()
		case 4:
			m.domain, err = f.str()
		case 5:
			m.modelVersion, err = f.int64()
		case 6:
			m.doc, err = f.str()
		case 7:
			var gb []byte
			if gb, err = f.bytes(); err == nil {
				m.graph, err = decodeGraph(gb, 0)
			}
		case 8:
			var ob []byte
			if ob, err = f.bytes(); err == nil {
				var id opsetID
				id, err = decodeOpset(ob)
				m.opsets = append(m.opsets, id)
			}
		case 14:
			var e kv
			e, err = decodeKV(f)
			m.meta = append(m.meta, e)
		case 25:
			m.nFunctions++
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ModelProto: %w", err)
	}
	return m, nil
}

func decodeOpset(b []byte) (opsetID, error) {
	var id opsetID
	err := walk(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			id.domain, err = f.str()
		case 2:
			id.version, err = f.int64()
		}
		return err
	})
	return id, err
}

func decodeKV(f field) (kv, error) {
	var e kv
	b, err := f.bytes()
	if err != nil {
		return e, err
	}
	err = walk(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			e.key, err = f.str()
		case 2:
			e.value, err = f.str()
		}
		return err
	})
	return e, err
}

func decodeGraph(b []byte, depth int) (*graphProto, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("subgraphs nested deeper than %d", maxDepth)
	}
	g := &graphProto{}
	err := walk(b, func(f field) error {
		var err error
		var sub []byte
		if f.num != 2 && f.num != 10 {
			// every other field we read is a message
			if sub, err = f.bytes(); err != nil {
				return err
			}
		}
		switch f.num {
		case 1:
			var n *nodeProto
			n, err = decodeNode(sub, depth)
			if err != nil {
				return fmt.Errorf("node %d: %w", len(g.nodes), err)
			}
			g.nodes = append(g.nodes, n)
		case 2:
			g.name, err = f.str()
		case 5:
			var t *tensorProto
			t, err = decodeTensor(sub)
			if err != nil {
				return fmt.Errorf("initializer %d: %w", len(g.inits), err)
			}
			g.inits = append(g.inits, t)
		case 15:
			g.nSparseInit++
		case 11, 12, 13:
			var vi *valueInfoProto
			vi, err = decodeValueInfo(sub)
			if err != nil {
				return fmt.Errorf("value info: %w", err)
			}
			switch f.num {
			case 11:
				g.inputs = append(g.inputs, vi)
			case 12:
				g.outputs = append(g.outputs, vi)
			default:
				g.valueInfo = append(g.valueInfo, vi)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("GraphProto %q: %w", g.name, err)
	}
	return g, nil
}

func decodeNode(b []byte, depth int) (*nodeProto, error) {
	n := &nodeProto{}
	err := walk(b, func(f field) error {
		var err error
		var s string
		switch f.num {
		case 1:
			s, err = f.str()
			n.inputs = append(n.inputs, s)
		case 2:
			s, err = f.str()
			n.outputs = append(n.outputs, s)
		case 3:
			n.name, err = f.str()
		case 4:
			n.op, err = f.str()
		case 7:
			n.domain, err = f.str()
		case 5:
			var ab []byte
			if ab, err = f.bytes(); err != nil {
				return err
			}
			var a *attrProto
			if a, err = decodeAttr(ab, depth); err != nil {
				return fmt.Errorf("attribute %d: %w", len(n.attrs), err)
			}
			n.attrs = append(n.attrs, a)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("NodeProto %q (%s): %w", n.name, n.op, err)
	}
	return n, nil
}

func decodeAttr(b []byte, depth int) (*attrProto, error) {
	a := &attrProto{}
	err := walk(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			a.name, err = f.str()
		case 21:
			a.refAttrName, err = f.str()
		case 20:
			a.typ, err = f.int32()
		case 2:
			a.f, err = f.float32()
			a.hasF = true
		case 3:
			a.i, err = f.int64()
			a.hasI = true
		case 4:
			a.s, err = f.bytes()
			a.hasS = true
		case 5:
			var tb []byte
			if tb, err = f.bytes(); err == nil {
				a.t, err = decodeTensor(tb)
			}
		case 6:
			var gb []byte
			if gb, err = f.bytes(); err == nil {
				a.g, err = decodeGraph(gb, depth+1)
			}
		case 22:
			a.hasSparse = true
		case 14:
			a.hasTP = true
		case 7:
			var u []uint32
			u, err = appendFixed32s(nil, f)
			for _, x := range u {
				a.floats = append(a.floats, f32frombits(x))
			}
		case 8:
			a.ints, err = appendVarints(a.ints, f)
		case 9:
			var s []byte
			s, err = f.bytes()
			a.strings = append(a.strings, s)
		case 10:
			var tb []byte
			if tb, err = f.bytes(); err == nil {
				var t *tensorProto
				t, err = decodeTensor(tb)
				a.tensors = append(a.tensors, t)
			}
		case 11:
			var gb []byte
			if gb, err = f.bytes(); err == nil {
				var g *graphProto
				g, err = decodeGraph(gb, depth+1)
				a.graphs = append(a.graphs, g)
			}
		case 23:
			a.nSparse++
		case 15:
			a.nTP++
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("AttributeProto %q: %w", a.name, err)
	}
	if a.typ == atUndefined {
		a.typ = a.guessType()
	}
	return a, nil
}

// guessType infers the type of an attribute written without one (IR v1).
func (a *attrProto) guessType() int32 {
	switch {
	case a.hasF:
		return atFloat
	case a.hasI:
		return atInt
	case a.hasS:
		return atString
	case a.t != nil:
		return atTensor
	case a.g != nil:
		return atGraph
	case a.hasSparse:
		return atSparseTensor
	case a.hasTP:
		return atTypeProto
	case len(a.floats) > 0:
		return atFloats
	case len(a.ints) > 0:
		return atInts
	case len(a.strings) > 0:
		return atStrings
	case len(a.tensors) > 0:
		return atTensors
	case len(a.graphs) > 0:
		return atGraphs
	case a.nSparse > 0:
		return atSparseTens
	case a.nTP > 0:
		return atTypeProtos
	}
	return atUndefined
}

func decodeTensor(b []byte) (*tensorProto, error) {
	t := &tensorProto{}
	err := walk(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			t.dims, err = appendVarints(t.dims, f)
		case 2:
			t.dataType, err = f.int32()
		case 3:
			t.hasSegment = true
		case 4:
			t.floatData, err = appendFixed32s(t.floatData, f)
		case 5:
			t.int32Data, err = appendVarints(t.int32Data, f)
		case 6:
			t.nString++
		case 7:
			t.int64Data, err = appendVarints(t.int64Data, f)
		case 8:
			t.name, err = f.str()
		case 9:
			t.raw, err = f.bytes()
			t.hasRaw = true
		case 10:
			t.doubleData, err = appendFixed64s(t.doubleData, f)
		case 11:
			t.uint64Data, err = appendVarints(t.uint64Data, f)
		case 13:
			var e kv
			e, err = decodeKV(f)
			t.external = append(t.external, e)
		case 14:
			t.location, err = f.int32()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("TensorProto %q: %w", t.name, err)
	}
	return t, nil
}

func decodeValueInfo(b []byte) (*valueInfoProto, error) {
	vi := &valueInfoProto{}
	err := walk(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			vi.name, err = f.str()
		case 2:
			var tb []byte
			if tb, err = f.bytes(); err == nil {
				vi.typ, err = decodeType(tb)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ValueInfoProto %q: %w", vi.name, err)
	}
	return vi, nil
}

// decodeType reads a TypeProto. Only tensor types are decoded in detail;
// other kinds are recorded so that they can be refused by name.
func decodeType(b []byte) (*typeProto, error) {
	tp := &typeProto{}
	err := walk(b, func(f field) error {
		switch f.num {
		case 1:
			tb, err := f.bytes()
			if err != nil {
				return err
			}
			tp.kind = typeTensor
			return walk(tb, func(f field) error {
				var err error
				switch f.num {
				case 1:
					tp.elemType, err = f.int32()
				case 2:
					var sb []byte
					if sb, err = f.bytes(); err == nil {
						tp.hasShape = true
						tp.shape, err = decodeShape(sb)
					}
				}
				return err
			})
		case 4:
			tp.kind = typeSequence
		case 5:
			tp.kind = typeMap
		case 9:
			tp.kind = typeOptional
		case 8:
			tp.kind = typeSparse
		}
		return nil
	})
	return tp, err
}

func decodeShape(b []byte) ([]dimProto, error) {
	dims := []dimProto{}
	err := walk(b, func(f field) error {
		if f.num != 1 {
			return nil
		}
		db, err := f.bytes()
		if err != nil {
			return err
		}
		var d dimProto
		err = walk(db, func(f field) error {
			var err error
			switch f.num {
			case 1:
				d.value, err = f.int64()
				d.hasValue = true
			case 2:
				d.param, err = f.str()
			}
			return err
		})
		dims = append(dims, d)
		return err
	})
	return dims, err
}
