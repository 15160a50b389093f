package scheduler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// Options configures scheduling.
type Options struct {
	// Devices in preference order; the first is the default device.
	Devices []backends.Device
	// Pins maps a node name or an op type to a device name.
	Pins map[string]string
}

// Schedule places every node of g on a device and builds the plan.
func Schedule(g *ir.Graph, opts Options) (*plan.Plan, error) {
	if len(opts.Devices) == 0 {
		return nil, errors.New("scheduler: no devices (is a backend imported?)")
	}
	byName := map[string]backends.Device{}
	for _, d := range opts.Devices {
		byName[d.Name()] = d
	}
	for k, dev := range opts.Pins {
		if _, ok := byName[dev]; !ok {
			return nil, fmt.Errorf("scheduler: pin %q names unknown device %q", k, dev)
		}
	}
	placed := map[*ir.Value]string{} // value -> device holding it
	deviceOf := make([]string, len(g.Nodes))
	causes := make([]string, len(g.Nodes))
	var unsupported []error
	for i, n := range g.Nodes {
		dev, cause, err := place(n, opts, byName, placed)
		if err != nil {
			unsupported = append(unsupported, err)
			continue
		}
		deviceOf[i], causes[i] = dev, cause
		for _, o := range n.Outputs {
			placed[o] = dev
		}
	}
	if len(unsupported) > 0 {
		return nil, fmt.Errorf("scheduler: %w", errors.Join(unsupported...))
	}

	p := &plan.Plan{Graph: g}
	for i, n := range g.Nodes {
		if len(p.Partitions) == 0 || p.Partitions[len(p.Partitions)-1].Device != deviceOf[i] {
			p.Partitions = append(p.Partitions, &plan.Partition{Index: len(p.Partitions), Device: deviceOf[i]})
		}
		part := p.Partitions[len(p.Partitions)-1]
		part.Nodes = append(part.Nodes, n)
		part.Causes = append(part.Causes, causes[i])
	}
	linkPartitions(g, p)
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			p.Buffers = append(p.Buffers, plan.Buffer{Value: o, Device: placed[o], Bytes: staticBytes(o), Offset: -1})
		}
	}
	if err := planMemory(p); err != nil {
		return nil, err
	}
	return p, nil
}

// place picks the device for one node and says why.
func place(n *ir.Node, opts Options, byName map[string]backends.Device, placed map[*ir.Value]string) (string, string, error) {
	for _, key := range []string{n.Name, n.Op} {
		if dev, ok := opts.Pins[key]; ok && key != "" {
			if err := byName[dev].Supports(n); err != nil {
				return "", "", fmt.Errorf("node %v is pinned to %s, which cannot run it: %w", n, dev, err)
			}
			return dev, "pinned by the user (" + key + ")", nil
		}
	}
	// Prefer the device that already holds the inputs.
	for _, in := range n.Inputs {
		if dev, ok := placed[in]; ok {
			if byName[dev].Supports(n) == nil {
				return dev, "inputs live on " + dev, nil
			}
			break
		}
	}
	var reasons []string
	for i, d := range opts.Devices {
		err := d.Supports(n)
		if err == nil {
			cause := "default device"
			if i > 0 {
				cause = "unsupported on " + strings.Join(reasons, "; ")
			}
			return d.Name(), cause, nil
		}
		reasons = append(reasons, d.Name()+": "+err.Error())
		if len(opts.Devices) == 1 {
			return "", "", fmt.Errorf("node %v: %w", n, err)
		}
	}
	return "", "", fmt.Errorf("node %v: %w: no device supports it (%s)", n, ir.ErrUnsupported, strings.Join(reasons, "; "))
}

// linkPartitions fills each partition's Inputs and Outputs.
func linkPartitions(g *ir.Graph, p *plan.Plan) {
	owner := map[*ir.Value]int{}
	for _, part := range p.Partitions {
		for _, n := range part.Nodes {
			for _, o := range n.Outputs {
				owner[o] = part.Index
			}
		}
	}
	isOutput := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		isOutput[o] = true
	}
	exported := map[*ir.Value]bool{}
	for _, part := range p.Partitions {
		seen := map[*ir.Value]bool{}
		for _, n := range part.Nodes {
			for _, in := range nodeReads(n) {
				if o, ok := owner[in]; (!ok || o != part.Index) && !seen[in] {
					seen[in] = true
					part.Inputs = append(part.Inputs, in)
					if ok {
						exported[in] = true
					}
				}
			}
		}
	}
	for _, part := range p.Partitions {
		for _, n := range part.Nodes {
			for _, o := range n.Outputs {
				if exported[o] || isOutput[o] {
					part.Outputs = append(part.Outputs, o)
				}
			}
		}
	}
}

// nodeReads lists the values a node reads, including outer-scope values
// read inside its subgraphs.
func nodeReads(n *ir.Node) []*ir.Value {
	var vs []*ir.Value
	for _, in := range n.Inputs {
		if in != nil {
			vs = append(vs, in)
		}
	}
	for _, sg := range n.Subgraphs() {
		vs = append(vs, sg.OuterRefs()...)
	}
	return vs
}

func staticBytes(v *ir.Value) int64 {
	if !v.DType.Valid() {
		return -1
	}
	n := v.Shape.NumElements()
	if n < 0 {
		return -1
	}
	return v.DType.Bytes(n)
}
