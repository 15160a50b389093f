package reduce

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Einsum", einsum) }

// Einsum labels: the 52 letters are labels 0..51 (A-Z, then a-z, so that
// label order is ASCII order), and the dims an ellipsis stands for get the
// labels ellipsisLabel+j, right-aligned across operands as in broadcasting.
const ellipsisLabel = 52

// einsumSpec is a parsed equation for operands of known ranks.
type einsumSpec struct {
	inputs   [][]int // the label of every dim of every operand
	output   []int   // the labels of the output dims
	ellipsis int     // how many dims the widest ellipsis stands for
}

// letterLabel maps a subscript letter to its label.
func letterLabel(c byte) (int, bool) {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A'), true
	case c >= 'a' && c <= 'z':
		return 26 + int(c-'a'), true
	}
	return 0, false
}

// parseTerm splits one subscript term into its letter labels, with -1 where
// an ellipsis stands.
func parseTerm(term string) ([]int, error) {
	var labels []int
	seenEllipsis := false
	for i := 0; i < len(term); i++ {
		if strings.HasPrefix(term[i:], "...") {
			if seenEllipsis {
				return nil, fmt.Errorf("term %q has more than one ellipsis", term)
			}
			seenEllipsis = true
			labels = append(labels, -1)
			i += 2
			continue
		}
		l, ok := letterLabel(term[i])
		if !ok {
			return nil, fmt.Errorf("term %q: bad subscript %q", term, term[i])
		}
		labels = append(labels, l)
	}
	return labels, nil
}

// parseEinsum parses an equation such as "...ij,...jk->...ik" or the
// implicit "ij,jk" for operands of the given ranks. In implicit mode the
// output holds the ellipsis dims, then the letters that occur exactly once,
// in alphabetical (ASCII) order.
func parseEinsum(eq string, ranks []int) (*einsumSpec, error) {
	eq = strings.Join(strings.Fields(eq), "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(ranks) {
		return nil, fmt.Errorf("equation %q has %d operands, the node %d inputs", eq, len(terms), len(ranks))
	}
	spec := &einsumSpec{}
	raw := make([][]int, len(terms))
	for k, term := range terms {
		labels, err := parseTerm(term)
		if err != nil {
			return nil, err
		}
		raw[k] = labels
		letters := len(labels)
		if slices.Contains(labels, -1) {
			letters--
			if ranks[k] < letters {
				return nil, fmt.Errorf("operand %d has rank %d, fewer than the %d subscripts of %q", k, ranks[k], letters, term)
			}
			spec.ellipsis = max(spec.ellipsis, ranks[k]-letters)
		} else if ranks[k] != letters {
			return nil, fmt.Errorf("operand %d has rank %d, but %q has %d subscripts", k, ranks[k], term, letters)
		}
	}
	count := map[int]int{}
	for k, labels := range raw {
		var dims []int
		for _, l := range labels {
			if l >= 0 {
				dims = append(dims, l)
				count[l]++
				continue
			}
			e := ranks[k] - (len(labels) - 1) // dims this ellipsis stands for
			for j := 0; j < e; j++ {
				dims = append(dims, ellipsisLabel+spec.ellipsis-e+j)
			}
		}
		spec.inputs = append(spec.inputs, dims)
	}
	if !explicit {
		for j := 0; j < spec.ellipsis; j++ {
			spec.output = append(spec.output, ellipsisLabel+j)
		}
		for l := 0; l < ellipsisLabel; l++ {
			if count[l] == 1 {
				spec.output = append(spec.output, l)
			}
		}
		return spec, nil
	}
	out, err := parseTerm(rhs)
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, l := range out {
		if l < 0 {
			if seen[-1] {
				return nil, fmt.Errorf("output %q has more than one ellipsis", rhs)
			}
			seen[-1] = true
			for j := 0; j < spec.ellipsis; j++ {
				spec.output = append(spec.output, ellipsisLabel+j)
			}
			continue
		}
		if seen[l] {
			return nil, fmt.Errorf("output %q repeats a subscript", rhs)
		}
		if count[l] == 0 {
			return nil, fmt.Errorf("output subscript of %q does not occur in the inputs", rhs)
		}
		seen[l] = true
		spec.output = append(spec.output, l)
	}
	if spec.ellipsis > 0 && !seen[-1] {
		// numpy refuses to sum over broadcast dims silently; so do we.
		return nil, fmt.Errorf("equation %q: the inputs have ellipsis dims but the output has no ellipsis", eq)
	}
	return spec, nil
}

// einsum evaluates an Einsum node by a plain loop over the whole index space
// of the labels (output labels outermost), multiplying one element of every
// operand and summing into the output. Repeated labels in one operand read
// its diagonal; ellipsis dims of size 1 broadcast.
func einsum(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("Einsum needs at least one input")
	}
	ranks := make([]int, len(in))
	for k, t := range in {
		if t == nil {
			return nil, fmt.Errorf("missing input %d", k)
		}
		if err := needNumeric(n.Op, t); err != nil {
			return nil, err
		}
		if t.DType != in[0].DType {
			return nil, fmt.Errorf("input %d is %v, input 0 %v", k, t.DType, in[0].DType)
		}
		ranks[k] = len(t.Shape)
	}
	if !n.Has("equation") {
		return nil, fmt.Errorf("Einsum without equation")
	}
	spec, err := parseEinsum(n.AttrString("equation", ""), ranks)
	if err != nil {
		return nil, err
	}

	// The size of every label; ellipsis dims of size 1 broadcast.
	size := map[int]int64{}
	for k, dims := range spec.inputs {
		for d, l := range dims {
			s := in[k].Shape[d]
			old, ok := size[l]
			switch {
			case !ok || old == s:
				size[l] = s
			case l >= ellipsisLabel && old == 1:
				size[l] = s
			case l >= ellipsisLabel && s == 1:
			default:
				return nil, fmt.Errorf("subscript dims disagree: operand %d dim %d has size %d, elsewhere %d", k, d, s, old)
			}
		}
	}
	// The loop order: output labels, then the contracted ones.
	order := append([]int{}, spec.output...)
	for l := 0; l < ellipsisLabel+spec.ellipsis; l++ {
		if _, used := size[l]; used && !slices.Contains(order, l) {
			order = append(order, l)
		}
	}
	loop := make([]int64, len(order))
	for i, l := range order {
		loop[i] = size[l]
	}
	outShape := append([]int64{}, loop[:len(spec.output)]...)
	// Strides over the loop index: the output's (0 for contracted labels)
	// and each operand's (summed over repeated labels, 0 where broadcast).
	strides := make([][]int64, len(in)+1)
	outStrides := ref.Strides(outShape)
	strides[0] = make([]int64, len(order))
	copy(strides[0], outStrides)
	for k, dims := range spec.inputs {
		st := ref.Strides(in[k].Shape)
		s := make([]int64, len(order))
		for d, l := range dims {
			if in[k].Shape[d] == 1 && size[l] != 1 {
				continue // broadcast
			}
			s[slices.Index(order, l)] += st[d]
		}
		strides[k+1] = s
	}

	total := product(loop)
	out := ir.NewTensor(in[0].DType, outShape)
	it := ref.NewIndexer(loop, strides...)
	if in[0].DType.IsFloat() {
		acc := make([]float64, out.Len())
		for step := 0; step < total; step++ {
			p := 1.0
			for k, t := range in {
				p *= t.Float64(int(it.Offsets[k+1]))
			}
			acc[it.Offsets[0]] += p
			it.Next()
		}
		for i, v := range acc {
			out.SetFloat64(i, v)
		}
	} else {
		acc := make([]int64, out.Len())
		for step := 0; step < total; step++ {
			p := int64(1)
			for k, t := range in {
				p *= t.Int64(int(it.Offsets[k+1]))
			}
			acc[it.Offsets[0]] += p
			it.Next()
		}
		for i, v := range acc {
			out.SetInt64(i, v)
		}
	}
	return []*ir.Tensor{out}, nil
}
