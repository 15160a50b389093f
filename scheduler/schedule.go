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
	// Pins maps a node name or an op type to a device name. A pin is
	// strict: a pinned node its device cannot run is an error. Rules are
	// the lenient, pattern-based form.
	Pins map[string]string
	// Rules are user placement rules (--place), later rules winning; see Rule.
	Rules []Rule
	// Profile gives the cost-model numbers of the devices (nil: generic
	// numbers per device kind).
	Profile *Profile
	// KeepFactor: a node stays on the device holding its inputs unless that
	// costs more than KeepFactor times the cheapest device (0: DefaultKeepFactor).
	KeepFactor float64
	// BatchThreshold: a weight-heavy node (see weightHeavy) goes to a GPU
	// only when its batch is at least this (0: DefaultBatchThreshold).
	BatchThreshold int64
}

// Schedule places every node of g on a device and builds the plan. It may
// add Transfer nodes to g (see OpTransfer).
func Schedule(g *ir.Graph, opts Options) (*plan.Plan, error) {
	p, _, err := ScheduleReport(g, opts)
	return p, err
}

// ScheduleReport is Schedule that also returns the placement report: every
// node's device and cause, per-device totals, transfers and the estimated
// timeline on opts.Profile.
func ScheduleReport(g *ir.Graph, opts Options) (*plan.Plan, *Report, error) {
	if len(opts.Devices) == 0 {
		return nil, nil, errors.New("scheduler: no devices (is a backend imported?)")
	}
	pl := &placer{opts: opts, devs: opts.Devices, byName: map[string]backends.Device{},
		loc: map[*ir.Value]string{}, copied: map[transferKey]bool{}, factor: opts.KeepFactor, threshold: opts.BatchThreshold}
	if pl.factor <= 0 {
		pl.factor = DefaultKeepFactor
	}
	if pl.threshold <= 0 {
		pl.threshold = DefaultBatchThreshold
	}
	for _, d := range opts.Devices {
		pl.byName[d.Name()] = d
	}
	if opts.Profile != nil {
		if err := opts.Profile.Validate(); err != nil {
			return nil, nil, fmt.Errorf("scheduler: %w", err)
		}
	}
	pl.prof = bindProfiles(opts.Devices, opts.Profile)
	for k, dev := range opts.Pins {
		if _, ok := pl.byName[dev]; !ok {
			return nil, nil, fmt.Errorf("scheduler: pin %q names unknown device %q", k, dev)
		}
	}
	for _, r := range opts.Rules {
		d, ok := resolveDevice(r.Device, opts.Devices)
		if !ok {
			return nil, nil, fmt.Errorf("scheduler: --place %s names unknown device %q (have: %s)", r.Text, r.Device, deviceNames(opts.Devices))
		}
		pl.rules = append(pl.rules, resolvedRule{r, d})
	}
	placements := make([]Placement, len(g.Nodes))
	var unsupported []error
	for i, n := range g.Nodes {
		pd, err := pl.place(n)
		if err != nil {
			unsupported = append(unsupported, err)
			continue
		}
		placements[i] = pd
		for _, o := range n.Outputs {
			pl.loc[o] = pd.Device
		}
	}
	if len(unsupported) > 0 {
		return nil, nil, fmt.Errorf("scheduler: %w", errors.Join(unsupported...))
	}
	placements, err := pl.insertTransfers(g, placements)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler: %w", err)
	}

	p := &plan.Plan{Graph: g}
	for _, pd := range placements {
		if len(p.Partitions) == 0 || p.Partitions[len(p.Partitions)-1].Device != pd.Device {
			p.Partitions = append(p.Partitions, &plan.Partition{Index: len(p.Partitions), Device: pd.Device})
		}
		part := p.Partitions[len(p.Partitions)-1]
		part.Nodes = append(part.Nodes, pd.Node)
		part.Causes = append(part.Causes, pd.Text)
	}
	linkPartitions(g, p)
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			p.Buffers = append(p.Buffers, plan.Buffer{Value: o, Device: pl.loc[o], Bytes: staticBytes(o), Offset: -1})
		}
	}
	if err := planMemory(p); err != nil {
		return nil, nil, err
	}
	return p, pl.report(p, placements), nil
}

func deviceNames(devs []backends.Device) string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Name()
	}
	return strings.Join(names, ", ")
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
