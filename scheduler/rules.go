package scheduler

import (
	"fmt"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// Rule is a user placement rule, written PATTERN=DEVICE:
//
//	MatMul=vulkan            op type (a glob: Conv* matches Conv and ConvTranspose)
//	name:/layers.3/*=cpu     node name glob (* matches any run of characters, / included; ? one)
//	*=vulkan                 every node
//
// DEVICE is a device name ("vulkan:0"), a backend name that prefixes device
// names ("vulkan" picks the first "vulkan:N"), or a kind ("gpu", "cpu").
// Later rules win. A rule that sends a node to a device that cannot run it
// does not fail the plan: the node is placed automatically and its cause is
// a warning (CausePinFallback).
type Rule struct {
	// Text is the rule as written.
	Text string
	// Pattern is the glob; ByName says it matches node names, not op types.
	Pattern string
	ByName  bool
	// Device is the device as written.
	Device string
}

// ParseRule parses PATTERN=DEVICE.
func ParseRule(s string) (Rule, error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 || i == len(s)-1 {
		return Rule{}, fmt.Errorf("placement rule %q: want OP=DEVICE, name:GLOB=DEVICE or *=DEVICE", s)
	}
	r := Rule{Text: s, Pattern: s[:i], Device: s[i+1:]}
	if p, ok := strings.CutPrefix(r.Pattern, "name:"); ok {
		r.Pattern, r.ByName = p, true
	}
	if r.Pattern == "" {
		return Rule{}, fmt.Errorf("placement rule %q: empty pattern", s)
	}
	return r, nil
}

// ParseRules parses each rule in order.
func ParseRules(ss []string) ([]Rule, error) {
	var rs []Rule
	for _, s := range ss {
		r, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// Matches reports whether the rule selects node n.
func (r Rule) Matches(n *ir.Node) bool {
	if r.ByName {
		return glob(r.Pattern, n.Name)
	}
	return glob(r.Pattern, n.Op)
}

// glob matches s against a pattern where * is any run of characters
// (including '/') and ? is one character; everything else is literal.
func glob(pattern, s string) bool {
	// Iterative matching with one backtrack point, linear in practice.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// resolveDevice finds the device a rule or pin names: exact name, then the
// first device whose name is name+":N", then the first of that kind.
func resolveDevice(name string, devs []backends.Device) (backends.Device, bool) {
	for _, d := range devs {
		if d.Name() == name {
			return d, true
		}
	}
	for _, d := range devs {
		if strings.HasPrefix(d.Name(), name+":") {
			return d, true
		}
	}
	for _, d := range devs {
		if d.Kind().String() == name {
			return d, true
		}
	}
	return nil, false
}
