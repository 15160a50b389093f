package scheduler

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// OpTransfer is the core op the scheduler inserts where a value crosses
// between devices whose buffers are not compatible (see ir/ops.go):
//
//	Transfer(X) -> Y     Y is a copy of X in the buffers of device "to"
//	    attrs: from (string: the device holding X, "host" for a graph
//	    input), to (string: the device Y lives on).
//
// After insertion every partition reads only values of its own device (or
// host-visible ones when its device is host-visible), constants, and the
// one foreign input of each of its Transfer nodes. A Transfer runs on the
// side that owns the copy: the non-host-visible device (an upload at the
// start of its partition, a download at the end), or, when that device
// declines the op, the other side. The CPU backend runs it as a copy.
const OpTransfer = ir.OpTransfer

// hostName is the "from" of a transfer whose source is a graph input.
const hostName = "host"

// transferKey identifies one copy: a value to a device.
type transferKey struct {
	v   *ir.Value
	dev string
}

// insertTransfers adds Transfer nodes to g for every read that crosses an
// incompatible device boundary and for graph outputs left on a device that
// is not host-visible, then rebuilds g.Nodes in order. placements is
// indexed like g.Nodes on entry and is returned in the new node order.
func (pl *placer) insertTransfers(g *ir.Graph, placements []Placement) ([]Placement, error) {
	before := map[*ir.Node][]Placement{}
	after := map[*ir.Node][]Placement{}
	made := map[transferKey]*ir.Value{}

	add := func(v *ir.Value, to string, consumer *ir.Node) (*ir.Value, error) {
		key := transferKey{v, to}
		if tv, ok := made[key]; ok {
			return tv, nil
		}
		from, fromName := pl.loc[v], hostName
		if from != "" {
			fromName = from
		}
		name := fmt.Sprintf("transfer:%s:%s->%s", valueLabel(v), fromName, to)
		n := &ir.Node{Name: name, Op: OpTransfer, Inputs: []*ir.Value{v}, Attrs: ir.Attrs{
			"from": {Kind: ir.AttrString, Str: fromName},
			"to":   {Kind: ir.AttrString, Str: to},
		}}
		tv := g.NewValue("", v.DType, v.Shape)
		if v.Name != "" {
			tv.Name = v.Name + "@" + to
		}
		tv.Producer = n
		n.Outputs = []*ir.Value{tv}
		runs, err := pl.transferDevice(n, from, to)
		if err != nil {
			return nil, err
		}
		b, _ := valueBytes(v)
		p := Placement{Node: n, Device: runs, Cause: CauseTransfer,
			Text: fmt.Sprintf("copy %s (%d bytes) from %s to %s", valueLabel(v), b, fromName, to),
			Us:   TransferUs(b, pl.prof[from], pl.prof[to])}
		if runs == from && from != "" && v.Producer != nil {
			after[v.Producer] = append(after[v.Producer], p)
		} else {
			before[consumer] = append(before[consumer], p)
		}
		made[key] = tv
		pl.loc[tv] = to
		return tv, nil
	}

	for i, n := range g.Nodes {
		dev := placements[i].Device
		seen := map[*ir.Value]bool{}
		for _, v := range nodeReads(n) {
			if v.IsConst() || seen[v] {
				continue
			}
			seen[v] = true
			if Compatible(pl.prof[pl.loc[v]], pl.prof[dev]) {
				continue
			}
			tv, err := add(v, dev, n)
			if err != nil {
				return nil, err
			}
			replaceUses(n, v, tv)
		}
	}
	// Graph outputs come back to the host (the first host-visible device).
	host := ""
	for _, d := range pl.devs {
		if d.HostVisible() {
			host = d.Name()
			break
		}
	}
	swapped := map[*ir.Value]bool{}
	for i, o := range g.Outputs {
		dev, ok := pl.loc[o]
		if !ok || host == "" || Compatible(pl.prof[dev], pl.prof[host]) || o.Producer == nil {
			continue
		}
		tv, err := add(o, host, nil)
		if err != nil {
			return nil, err
		}
		// The graph output keeps its name; the device-side value is renamed.
		if !swapped[tv] {
			swapped[tv] = true
			tv.Name, o.Name = o.Name, tv.Name
		}
		g.Outputs[i] = tv
	}
	if len(made) == 0 {
		return placements, nil
	}
	var nodes []*ir.Node
	var out []Placement
	for i, n := range g.Nodes {
		for _, p := range before[n] {
			nodes, out = append(nodes, p.Node), append(out, p)
		}
		nodes, out = append(nodes, n), append(out, placements[i])
		for _, p := range after[n] {
			nodes, out = append(nodes, p.Node), append(out, p)
		}
	}
	// Output transfers with no consumer go where their producer put them;
	// any left (none expected) go last.
	for _, p := range before[nil] {
		nodes, out = append(nodes, p.Node), append(out, p)
	}
	g.Nodes = nodes
	return out, nil
}

// transferDevice picks the device that runs a copy from → to (from is ""
// for the host): the non-host-visible side first, the destination before
// the source, and only a device that supports the op.
func (pl *placer) transferDevice(n *ir.Node, from, to string) (string, error) {
	if from == "" { // a graph input: the host side is the first host-visible device
		for _, d := range pl.devs {
			if d.HostVisible() {
				from = d.Name()
				break
			}
		}
	}
	var order []string
	for _, d := range []string{to, from} {
		if d != "" && !pl.prof[d].HostVisible {
			order = append(order, d)
		}
	}
	for _, d := range []string{to, from} {
		if d != "" && pl.prof[d].HostVisible {
			order = append(order, d)
		}
	}
	var reasons []string
	for _, name := range order {
		d := pl.byName[name]
		err := d.Supports(n)
		if err == nil {
			return name, nil
		}
		reasons = append(reasons, err.Error())
	}
	return "", fmt.Errorf("node %v: %w: neither side of the copy runs %s (%v)", n, ir.ErrUnsupported, OpTransfer, reasons)
}

// replaceUses makes n (and the nodes of its subgraphs, which may read v
// from the enclosing scope) read nv instead of v.
func replaceUses(n *ir.Node, v, nv *ir.Value) {
	for i, in := range n.Inputs {
		if in == v {
			n.Inputs[i] = nv
		}
	}
	for _, sg := range n.Subgraphs() {
		for _, sn := range sg.Nodes {
			replaceUses(sn, v, nv)
		}
		for i, o := range sg.Outputs {
			if o == v {
				sg.Outputs[i] = nv
			}
		}
	}
}

func valueLabel(v *ir.Value) string {
	if v.Name != "" {
		return v.Name
	}
	return fmt.Sprintf("%%%d", v.ID)
}
