package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/scheduler/profiles"
)

// Profile describes the devices of one machine for the cost model: a
// bundled SoC profile (scheduler/profiles), a file written by `weft
// calibrate`, or one a user wrote by hand. The JSON schema is documented in
// docs/profiles.md.
type Profile struct {
	// Name identifies the profile ("snapdragon-8-gen-2", "host").
	Name string `json:"name"`
	// Description says what machine it describes, for people.
	Description string `json:"description,omitempty"`
	// Devices lists one entry per device, in preference order (the first is
	// the default device of a plan made from the profile alone).
	Devices []DeviceProfile `json:"devices"`
}

// DeviceProfile holds the cost-model numbers of one device. Rates are in
// the units their names say (GFLOP/s, GB/s with 1 GB = 1e9 bytes, µs).
type DeviceProfile struct {
	// Name is the device name as its backend reports it ("cpu",
	// "vulkan:0"); a real device matches the entry of the same name, or else
	// the first unused entry of its kind.
	Name string `json:"name"`
	// Kind is "cpu" or "gpu".
	Kind string `json:"kind"`
	// Model names the hardware ("Adreno 740", "4x Cortex-X3 ...").
	Model string `json:"model,omitempty"`
	// PeakGFLOPS is the peak arithmetic rate per dtype class: "f32", "f16",
	// "int8" (int8 in GOP/s). A missing class falls back to f32.
	PeakGFLOPS map[string]float64 `json:"peak_gflops"`
	// OpGFLOPS, when set, overrides the peak for f32 ops of a family with
	// the rate the device's kernels really reach on it (what `weft
	// calibrate` measures): "matmul" (MatMul, Gemm, FusedMatMul, QMatMul),
	// "conv" (Conv, FusedConv, ConvTranspose), "attention" (Attention),
	// "pool" (the window reductions MaxPool, AveragePool, LpPool), "norm"
	// (normalizations, Softmax, Fused elementwise chains) and "act"
	// (transcendental activations — Gelu, Erf, Tanh, Sigmoid, SiLU, Exp,
	// ... — standalone or fused into FusedMatMul/FusedConv; one FLOP per
	// element).
	OpGFLOPS map[string]float64 `json:"op_gflops,omitempty"`
	// MemBandwidthGBs is the memory bandwidth the device sees.
	MemBandwidthGBs float64 `json:"mem_bandwidth_gbs"`
	// LaunchOverheadUs is the fixed cost of one op (dispatch, barrier).
	LaunchOverheadUs float64 `json:"launch_overhead_us"`
	// TransferLatencyUs is the fixed cost of one copy to or from the host.
	TransferLatencyUs float64 `json:"transfer_latency_us,omitempty"`
	// ToHostGBs and FromHostGBs are the copy bandwidths device→host and
	// host→device.
	ToHostGBs   float64 `json:"to_host_gbs,omitempty"`
	FromHostGBs float64 `json:"from_host_gbs,omitempty"`
	// HostVisible says the device's buffers are plain host memory: values
	// move between it and other host-visible devices without copies.
	HostVisible bool `json:"host_visible"`
	// Ops, when set, lists the ops a stand-in device built from this entry
	// supports (see NewProfileDevice); empty means the default for the kind.
	Ops []string `json:"ops,omitempty"`
	// Source names where the numbers come from (spec sheets, articles, a
	// calibration run); Estimate says which numbers are estimates and how
	// they were derived.
	Source   string `json:"source"`
	Estimate string `json:"estimate,omitempty"`
}

// ParseProfile decodes and validates a profile; unknown fields are errors
// (a misspelt field must not silently become zero).
func ParseProfile(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks that every number the cost model divides by is positive
// and that names and kinds are sound.
func (p *Profile) Validate() error {
	if p.Name == "" {
		return errors.New("profile: no name")
	}
	if len(p.Devices) == 0 {
		return fmt.Errorf("profile %q: no devices", p.Name)
	}
	seen := map[string]bool{}
	for i, d := range p.Devices {
		where := fmt.Sprintf("profile %q: device %d (%q)", p.Name, i, d.Name)
		if d.Name == "" {
			return fmt.Errorf("%s: no name", where)
		}
		if seen[d.Name] {
			return fmt.Errorf("%s: duplicate name", where)
		}
		seen[d.Name] = true
		if d.Kind != "cpu" && d.Kind != "gpu" {
			return fmt.Errorf("%s: kind %q, want cpu or gpu", where, d.Kind)
		}
		if d.PeakGFLOPS["f32"] <= 0 {
			return fmt.Errorf("%s: peak_gflops.f32 must be positive", where)
		}
		for k, v := range d.PeakGFLOPS {
			if k != "f32" && k != "f16" && k != "int8" {
				return fmt.Errorf("%s: peak_gflops has %q, want f32, f16 or int8", where, k)
			}
			if v <= 0 {
				return fmt.Errorf("%s: peak_gflops.%s must be positive", where, k)
			}
		}
		for k, v := range d.OpGFLOPS {
			if !opFamilies[k] {
				return fmt.Errorf("%s: op_gflops has %q, want matmul, conv, attention, pool, norm or act", where, k)
			}
			if v <= 0 {
				return fmt.Errorf("%s: op_gflops.%s must be positive", where, k)
			}
		}
		if d.MemBandwidthGBs <= 0 {
			return fmt.Errorf("%s: mem_bandwidth_gbs must be positive", where)
		}
		if d.LaunchOverheadUs < 0 || d.TransferLatencyUs < 0 {
			return fmt.Errorf("%s: negative overhead or latency", where)
		}
		if !d.HostVisible && (d.ToHostGBs <= 0 || d.FromHostGBs <= 0) {
			return fmt.Errorf("%s: a device that is not host_visible needs positive to_host_gbs and from_host_gbs", where)
		}
		if d.Source == "" {
			return fmt.Errorf("%s: no source (say where the numbers come from)", where)
		}
	}
	return nil
}

// Device returns the entry of the given name, or nil.
func (p *Profile) Device(name string) *DeviceProfile {
	for i := range p.Devices {
		if p.Devices[i].Name == name {
			return &p.Devices[i]
		}
	}
	return nil
}

// LoadProfile returns a bundled profile by name, or reads a profile file
// (any argument containing a path separator or ending in .json is a file).
func LoadProfile(nameOrFile string) (*Profile, error) {
	if strings.HasSuffix(nameOrFile, ".json") || strings.ContainsRune(nameOrFile, os.PathSeparator) {
		data, err := os.ReadFile(nameOrFile)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		p, err := ParseProfile(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nameOrFile, err)
		}
		return p, nil
	}
	data, err := profiles.Read(nameOrFile)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, fmt.Errorf("bundled profile %s: %w", nameOrFile, err)
	}
	return p, nil
}

// Generic device numbers for devices that no profile describes: a modest
// CPU and a modest discrete-style GPU. They only need to order choices
// sensibly; a calibrated or bundled profile replaces them.
var (
	genericCPU = DeviceProfile{
		Name: "cpu", Kind: "cpu", PeakGFLOPS: map[string]float64{"f32": 50},
		MemBandwidthGBs: 10, LaunchOverheadUs: 1, HostVisible: true,
		Source: "weft generic default (not measured)",
	}
	genericGPU = DeviceProfile{
		Name: "gpu", Kind: "gpu", PeakGFLOPS: map[string]float64{"f32": 500, "f16": 1000},
		MemBandwidthGBs: 30, LaunchOverheadUs: 10, TransferLatencyUs: 50,
		ToHostGBs: 5, FromHostGBs: 5,
		Source: "weft generic default (not measured)",
	}
)

// bindProfiles gives every device its profile entry: the entry of the same
// name, else the first unused entry of the same kind, else the generic
// numbers for its kind (host visibility always comes from the device).
func bindProfiles(devs []backends.Device, p *Profile) map[string]*DeviceProfile {
	out := map[string]*DeviceProfile{}
	used := map[string]bool{}
	if p != nil {
		for _, d := range devs {
			if e := p.Device(d.Name()); e != nil {
				out[d.Name()] = e
				used[e.Name] = true
			}
		}
	}
	for _, d := range devs {
		if out[d.Name()] != nil {
			continue
		}
		var e *DeviceProfile
		if p != nil {
			for i := range p.Devices {
				if !used[p.Devices[i].Name] && p.Devices[i].Kind == d.Kind().String() {
					e = &p.Devices[i]
					used[e.Name] = true
					break
				}
			}
		}
		if e == nil {
			g := genericCPU
			if d.Kind() == backends.GPU {
				g = genericGPU
			}
			g.Name = d.Name()
			e = &g
		}
		out[d.Name()] = e
	}
	// The device is the authority on its buffers; the profile on speeds.
	for _, d := range devs {
		e := *out[d.Name()]
		e.HostVisible = d.HostVisible()
		if !e.HostVisible && (e.ToHostGBs <= 0 || e.FromHostGBs <= 0) {
			e.ToHostGBs, e.FromHostGBs = genericGPU.ToHostGBs, genericGPU.FromHostGBs
			e.TransferLatencyUs = max(e.TransferLatencyUs, genericGPU.TransferLatencyUs)
		}
		out[d.Name()] = &e
	}
	return out
}
