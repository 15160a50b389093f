package scheduler

import (
	"fmt"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// Cause is the code of a placement decision; Placement.Text says it for people.
type Cause string

// Placement causes.
const (
	// CausePinned: a --place rule or a pin chose the device.
	CausePinned Cause = "pinned"
	// CausePinFallback: a rule chose a device that cannot run the node; the
	// node was placed automatically instead (a warning).
	CausePinFallback Cause = "pin-fallback"
	// CauseInputs: the node stays on the device that holds its inputs,
	// which is not much slower than the cheapest device.
	CauseInputs Cause = "inputs-live-there"
	// CauseCheaper: the cheapest device, transfers included, by a margin
	// the text gives in µs.
	CauseCheaper Cause = "cheaper"
	// CauseUnsupported: the only device that supports the node.
	CauseUnsupported Cause = "unsupported-elsewhere"
	// CauseBatch: a weight-heavy node whose batch is below the GPU threshold
	// stays off the GPU although the GPU looked cheaper.
	CauseBatch Cause = "below-batch-threshold"
	// CauseDefault: no device is cheaper; the first in preference order.
	CauseDefault Cause = "default"
	// CauseTransfer: an inserted Transfer node (it runs on the side that
	// owns the copy).
	CauseTransfer Cause = "transfer"
)

// Placement is the decision for one node of the plan.
type Placement struct {
	Node   *ir.Node
	Device string
	Cause  Cause
	Text   string
	// Warning marks a decision the user should see: a node that a rule
	// sent elsewhere and that fell back.
	Warning bool
	// Us is the node's estimated time on its device (a Transfer: the copy).
	Us float64
}

// Defaults of the tunables in Options.
const (
	DefaultKeepFactor     = 1.5
	DefaultBatchThreshold = 32
)

// placer holds the state of one greedy walk.
type placer struct {
	opts      Options
	devs      []backends.Device
	byName    map[string]backends.Device
	prof      map[string]*DeviceProfile
	rules     []resolvedRule
	loc       map[*ir.Value]string // device holding a value; absent: host or constant
	copied    map[transferKey]bool // values already copied to a device by an earlier placement
	factor    float64
	threshold int64
}

type resolvedRule struct {
	Rule
	dev backends.Device
}

// place picks the device of one node and says why.
func (pl *placer) place(n *ir.Node) (Placement, error) {
	// Legacy pins: strict, an unsupported pin is an error.
	for _, key := range []string{n.Name, n.Op} {
		if dev, ok := pl.opts.Pins[key]; ok && key != "" {
			if err := pl.byName[dev].Supports(n); err != nil {
				return Placement{}, fmt.Errorf("node %v is pinned to %s, which cannot run it: %w", n, dev, err)
			}
			return pl.decided(n, dev, CausePinned, "pinned by the user ("+key+")"), nil
		}
	}
	// Rules: the last matching one wins; an unsupported one falls back.
	var fallback string
	for i := len(pl.rules) - 1; i >= 0; i-- {
		r := pl.rules[i]
		if !r.Matches(n) {
			continue
		}
		err := r.dev.Supports(n)
		if err == nil {
			return pl.decided(n, r.dev.Name(), CausePinned, fmt.Sprintf("pinned by the user (--place %s)", r.Text)), nil
		}
		fallback = fmt.Sprintf("--place %s: %s cannot run it (%v)", r.Text, r.dev.Name(), err)
		break
	}
	p, err := pl.auto(n)
	if err != nil {
		return p, err
	}
	if fallback != "" {
		p.Cause, p.Warning = CausePinFallback, true
		p.Text = fallback + "; fell back to " + p.Device + ": " + p.Text
	}
	return p, nil
}

func (pl *placer) decided(n *ir.Node, dev string, c Cause, text string) Placement {
	for _, v := range nodeReads(n) {
		if !v.IsConst() && !Compatible(pl.prof[pl.loc[v]], pl.prof[dev]) {
			pl.copied[transferKey{v, dev}] = true
		}
	}
	return Placement{Node: n, Device: dev, Cause: c, Text: text, Us: pl.prof[dev].NodeUs(n)}
}

// auto is the greedy cost-model choice.
func (pl *placer) auto(n *ir.Node) (Placement, error) {
	var supported []backends.Device
	var reasons []string
	var lastErr error
	for _, d := range pl.devs {
		if err := d.Supports(n); err != nil {
			reasons = append(reasons, d.Name()+": "+err.Error())
			lastErr = err
			continue
		}
		supported = append(supported, d)
	}
	if len(supported) == 0 {
		if len(pl.devs) == 1 {
			return Placement{}, fmt.Errorf("node %v: %w", n, lastErr)
		}
		return Placement{}, fmt.Errorf("node %v: %w: no device supports it (%s)", n, ir.ErrUnsupported, strings.Join(reasons, "; "))
	}
	cost := map[string]float64{}
	for _, d := range supported {
		cost[d.Name()] = pl.totalUs(n, d.Name())
	}
	candidates := supported
	heavy, batch := weightHeavy(n)
	gated := false
	if heavy && batch >= 0 && batch < pl.threshold {
		var off []backends.Device
		for _, d := range supported {
			if d.Kind() != backends.GPU {
				off = append(off, d)
			}
		}
		if len(off) > 0 && len(off) < len(supported) {
			candidates, gated = off, true
		}
	}
	best := cheapest(candidates, cost, "")
	home := pl.home(n)
	for _, d := range candidates {
		if d.Name() == home && cost[home] <= pl.factor*cost[best] {
			return pl.chosen(n, home, CauseInputs, "inputs live on "+home), nil
		}
	}
	if gated {
		if all := cheapest(supported, cost, ""); all != best {
			return pl.chosen(n, best, CauseBatch, fmt.Sprintf("batch %d below the GPU threshold %d (%s: %.1f µs, %s: %.1f µs)",
				batch, pl.threshold, all, cost[all], best, cost[best])), nil
		}
	}
	if len(supported) == 1 && len(pl.devs) > 1 {
		return pl.chosen(n, best, CauseUnsupported, "unsupported on "+strings.Join(reasons, "; ")), nil
	}
	if len(candidates) > 1 {
		second := cheapest(candidates, cost, best)
		if d := cost[second] - cost[best]; d > 0 {
			return pl.chosen(n, best, CauseCheaper, fmt.Sprintf("cheaper by %.1f µs than %s (%.1f vs %.1f µs, transfers included)", d, second, cost[best], cost[second])), nil
		}
	}
	return pl.chosen(n, best, CauseDefault, "default device"), nil
}

func (pl *placer) chosen(n *ir.Node, dev string, c Cause, text string) Placement {
	return pl.decided(n, dev, c, text)
}

// cheapest returns the name of the device of lowest cost, skipping skip;
// ties go to the earlier device.
func cheapest(devs []backends.Device, cost map[string]float64, skip string) string {
	best := ""
	for _, d := range devs {
		if d.Name() == skip {
			continue
		}
		if best == "" || cost[d.Name()] < cost[best] {
			best = d.Name()
		}
	}
	return best
}

// totalUs is the node's time on dev plus the transfers its inputs need.
func (pl *placer) totalUs(n *ir.Node, dev string) float64 {
	to := pl.prof[dev]
	us := to.NodeUs(n)
	seen := map[*ir.Value]bool{}
	for _, v := range nodeReads(n) {
		if v.IsConst() || seen[v] {
			continue
		}
		seen[v] = true
		if pl.copied[transferKey{v, dev}] {
			continue
		}
		b, _ := valueBytes(v)
		us += TransferUs(b, pl.prof[pl.loc[v]], to)
	}
	return us
}

// home is the device holding most of the bytes the node reads ("" when
// they are all graph inputs or constants).
func (pl *placer) home(n *ir.Node) string {
	held := map[string]int64{}
	best := ""
	for _, v := range nodeReads(n) {
		dev, ok := pl.loc[v]
		if !ok || v.IsConst() {
			continue
		}
		b, _ := valueBytes(v)
		held[dev] += b + 1 // +1: an unknown size still counts
		if best == "" || held[dev] > held[best] {
			best = dev
		}
	}
	return best
}
