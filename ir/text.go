package ir

import (
	"fmt"
	"regexp"
	"strings"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// Text renders g in weft's readable text form:
//
//	graph mlp(%x: f32[1,4]) -> (%y) {
//	  const %w : f32[4,2]
//	  %2 = matmul %x, %w : f32[1,2]
//	  %y = relu %2 : f32[1,2]
//	}
//
// A value prints as %name when its name is a plain identifier that is unique
// in the model, and as %ID otherwise. Output is deterministic.
func Text(g *Graph) string {
	p := &printer{names: map[*Value]string{}}
	p.assignNames(g)
	p.graph(g, "")
	return p.sb.String()
}

type printer struct {
	sb    strings.Builder
	names map[*Value]string
}

func (p *printer) assignNames(g *Graph) {
	count := map[string]int{}
	var all []*Value
	g.Walk(func(sg *Graph) {
		add := func(v *Value) {
			if v != nil {
				all = append(all, v)
				count[v.Name]++
			}
		}
		for _, v := range sg.Inputs {
			add(v)
		}
		for _, v := range sg.Consts {
			add(v)
		}
		for _, n := range sg.Nodes {
			for _, o := range n.Outputs {
				add(o)
			}
		}
	})
	for _, v := range all {
		if v.Name != "" && count[v.Name] == 1 && identRE.MatchString(v.Name) {
			p.names[v] = "%" + v.Name
		} else {
			p.names[v] = fmt.Sprintf("%%%d", v.ID)
		}
	}
}

func (p *printer) name(v *Value) string {
	if v == nil {
		return "_"
	}
	if s, ok := p.names[v]; ok {
		return s
	}
	return fmt.Sprintf("%%%d", v.ID)
}

func typeString(v *Value) string {
	if !v.DType.Valid() && v.Shape == nil {
		return "?"
	}
	return fmt.Sprintf("%v[%v]", v.DType, v.Shape)
}

func (p *printer) graph(g *Graph, indent string) {
	ins := make([]string, len(g.Inputs))
	for i, v := range g.Inputs {
		ins[i] = p.name(v) + ": " + typeString(v)
	}
	outs := make([]string, len(g.Outputs))
	for i, v := range g.Outputs {
		outs[i] = p.name(v)
	}
	fmt.Fprintf(&p.sb, "%sgraph %s(%s) -> (%s) {\n", indent, g.Name, strings.Join(ins, ", "), strings.Join(outs, ", "))
	for _, c := range g.Consts {
		fmt.Fprintf(&p.sb, "%s  const %s : %s\n", indent, p.name(c), typeString(c))
	}
	for _, n := range g.Nodes {
		outs := make([]string, len(n.Outputs))
		types := make([]string, len(n.Outputs))
		for i, o := range n.Outputs {
			outs[i] = p.name(o)
			types[i] = typeString(o)
		}
		args := make([]string, len(n.Inputs))
		for i, in := range n.Inputs {
			args[i] = p.name(in)
		}
		var attrs []string
		var subs []*Graph
		for _, k := range n.Attrs.Names() {
			a := n.Attrs[k]
			attrs = append(attrs, k+"="+a.String())
			if a.Kind == AttrGraph {
				subs = append(subs, a.Graph)
			} else if a.Kind == AttrGraphs {
				subs = append(subs, a.Graphs...)
			}
		}
		line := indent + "  " + strings.Join(outs, ", ") + " = " + strings.ToLower(n.Op)
		if len(args) > 0 {
			line += " " + strings.Join(args, ", ")
		}
		if len(attrs) > 0 {
			line += " {" + strings.Join(attrs, ", ") + "}"
		}
		line += " : " + strings.Join(types, ", ")
		p.sb.WriteString(line + "\n")
		for _, sg := range subs {
			p.graph(sg, indent+"    ")
		}
	}
	p.sb.WriteString(indent + "}\n")
}
