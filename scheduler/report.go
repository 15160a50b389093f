package scheduler

import (
	"fmt"
	"strings"

	"github.com/weftrt/weft/plan"
)

// Report is what scheduling decided and what it expects the plan to cost.
type Report struct {
	// Profile is the profile's name ("generic" when none was given).
	Profile string
	// Placements holds one entry per node of the plan, in plan order
	// (Transfer nodes included).
	Placements []Placement
	// Devices holds per-device totals, in device preference order (devices
	// with no nodes included).
	Devices []DeviceStats
	// Transfers counts the inserted Transfer nodes, their bytes and time.
	Transfers     int
	TransferBytes int64
	TransferUs    float64
	// EstimatedUs is the estimated latency of one run: the sum along the
	// schedule (devices run one after another for now).
	EstimatedUs float64
	// Timeline is one span per partition, in execution order.
	Timeline []Span
	// Warnings lists the decisions the user should see (fallbacks of nodes
	// a rule sent elsewhere).
	Warnings []string
}

// DeviceStats are one device's totals: FLOPs and bytes as the cost model
// counts them (NodeCost, with a constant-table gather reading its rows).
type DeviceStats struct {
	Name  string
	Kind  string
	Nodes int
	FLOPs int64
	Bytes int64
	Us    float64
}

// Span is one partition on the estimated timeline.
type Span struct {
	Partition int
	Device    string
	Nodes     int
	StartUs   float64
	EndUs     float64
}

func (pl *placer) report(p *plan.Plan, placements []Placement) *Report {
	r := &Report{Profile: "generic", Placements: placements}
	if pl.opts.Profile != nil {
		r.Profile = pl.opts.Profile.Name
	}
	idx := map[string]int{}
	for _, d := range pl.devs {
		idx[d.Name()] = len(r.Devices)
		r.Devices = append(r.Devices, DeviceStats{Name: d.Name(), Kind: d.Kind().String()})
	}
	for _, pd := range placements {
		ds := &r.Devices[idx[pd.Device]]
		ds.Us += pd.Us
		r.EstimatedUs += pd.Us
		if pd.Cause == CauseTransfer {
			r.Transfers++
			b, _ := valueBytes(pd.Node.Inputs[0])
			r.TransferBytes += b
			r.TransferUs += pd.Us
			continue
		}
		c := modelCost(pd.Node)
		ds.Nodes++
		ds.FLOPs += c.FLOPs
		ds.Bytes += c.Bytes
		if pd.Warning {
			r.Warnings = append(r.Warnings, fmt.Sprintf("node %v: %s", pd.Node, pd.Text))
		}
	}
	t, i := 0.0, 0
	for _, part := range p.Partitions {
		s := Span{Partition: part.Index, Device: part.Device, Nodes: len(part.Nodes), StartUs: t}
		for range part.Nodes {
			t += placements[i].Us
			i++
		}
		s.EndUs = t
		r.Timeline = append(r.Timeline, s)
	}
	return r
}

// GPUFraction is the fraction of the non-transfer nodes placed on GPU devices.
func (r *Report) GPUFraction() float64 {
	var gpu, all int
	for _, d := range r.Devices {
		all += d.Nodes
		if d.Kind == "gpu" {
			gpu += d.Nodes
		}
	}
	if all == 0 {
		return 0
	}
	return float64(gpu) / float64(all)
}

// Text renders the totals and the timeline for people.
func (r *Report) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "profile %s: estimated latency %.1f µs (devices run one after another)\n", r.Profile, r.EstimatedUs)
	for _, d := range r.Devices {
		fmt.Fprintf(&sb, "  %-10s %-3s %5d nodes  %10.3f GFLOP  %10.3f MB  %10.1f µs\n",
			d.Name, d.Kind, d.Nodes, float64(d.FLOPs)/1e9, float64(d.Bytes)/1e6, d.Us)
	}
	fmt.Fprintf(&sb, "  transfers: %d, %.3f MB, %.1f µs\n", r.Transfers, float64(r.TransferBytes)/1e6, r.TransferUs)
	fmt.Fprintf(&sb, "  on a GPU: %.0f%% of the nodes\n", 100*r.GPUFraction())
	sb.WriteString("timeline:\n")
	for _, s := range r.Timeline {
		fmt.Fprintf(&sb, "  %10.1f → %10.1f µs  partition %d on %s (%d nodes)\n", s.StartUs, s.EndUs, s.Partition, s.Device, s.Nodes)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&sb, "warning: %s\n", w)
	}
	return sb.String()
}
