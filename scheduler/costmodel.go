package scheduler

import (
	"github.com/weftrt/weft/ir"
)

// The cost model turns NodeCost's FLOPs and bytes into estimated time on a
// device profile:
//
//	time(node, dev)     = max(FLOPs / peak[dtype class], bytes / bandwidth) + launch overhead
//	transfer(bytes)     = latency + bytes / link bandwidth, or 0 between host-visible buffers
//
// Times are float64 microseconds throughout. The model is a roofline with a
// fixed per-op cost: it ignores caches, overlap between devices (devices run
// one after the other for now) and kernel quality.

// dtypeClass picks the peak-rate class a node computes in: "int8" for a
// quantized weight (Int8, block formats: their kernels multiply integers),
// "f16" when the node produces half floats, else "f32".
func dtypeClass(n *ir.Node) string {
	for _, v := range n.Inputs {
		if v != nil && v.IsConst() && (v.DType == ir.Int8 || v.DType.BlockSize() > 1) {
			return "int8"
		}
	}
	for _, v := range n.Outputs {
		if v != nil && (v.DType == ir.Float16 || v.DType == ir.BFloat16) {
			return "f16"
		}
	}
	return "f32"
}

// peak is the device's rate for class in FLOP/s, f32 when the class is absent.
func (d *DeviceProfile) peak(class string) float64 {
	if r, ok := d.PeakGFLOPS[class]; ok && r > 0 {
		return r * 1e9
	}
	return d.PeakGFLOPS["f32"] * 1e9
}

// ComputeUs estimates the time in µs of a node with cost c on the device.
func (d *DeviceProfile) ComputeUs(c Cost, class string) float64 {
	compute := float64(c.FLOPs) / d.peak(class)
	memory := float64(c.Bytes) / (d.MemBandwidthGBs * 1e9)
	return max(compute, memory)*1e6 + d.LaunchOverheadUs
}

// NodeUs estimates the time in µs of node n on the device: with the
// family's measured rate (OpGFLOPS) for an f32 node of a calibrated family,
// else with the dtype class's peak.
//
// A fused transcendental activation (FusedMatMul or FusedConv with Gelu,
// Tanh, Sigmoid, SiLU) is timed apart at the "act" rate when the profile
// has one: one output element costs as much as a standalone Gelu's, which
// on a CPU can exceed the multiply-adds that produced it.
func (d *DeviceProfile) NodeUs(n *ir.Node) float64 {
	c, class := modelCost(n), dtypeClass(n)
	if class != "f32" {
		return d.ComputeUs(c, class)
	}
	var actUs float64
	if ar := d.OpGFLOPS["act"]; ar > 0 && (n.Op == "FusedMatMul" || n.Op == "FusedConv") && transcendental[n.AttrString("activation", "")] {
		if out, ok := valueElems(n.Outputs[0]); ok {
			c.FLOPs -= out // NodeCost's one operation per element for the activation
			actUs = float64(out) / (ar * 1e9) * 1e6
		}
	}
	var loweringUs float64
	if d.Kind == "cpu" && opFamily[n.Op] == "conv" && d.MemBandwidthGBs > 0 {
		// A CPU conv is lowered to a GEMM: the im2col matrix is written, then
		// read back and packed before any multiply starts. That traffic is a
		// phase of its own, and it dominates convs with few output channels
		// (a 7×7 stem over RGB), whose FLOPs alone would predict a fraction
		// of their time.
		loweringUs = float64(im2colBytes(n)) / (d.MemBandwidthGBs * 1e9) * 1e6
	}
	r := d.OpGFLOPS[opFamily[n.Op]]
	if r <= 0 {
		if actUs == 0 {
			return d.ComputeUs(c, class) + loweringUs
		}
		r = d.PeakGFLOPS["f32"]
	}
	compute := float64(c.FLOPs) / (r * 1e9)
	memory := float64(c.Bytes) / (d.MemBandwidthGBs * 1e9)
	return max(compute, memory)*1e6 + loweringUs + actUs + d.LaunchOverheadUs
}

// im2colBytes is the memory traffic of lowering a 2-D/1-D f32 conv to a
// GEMM on the CPU: the column matrix (Cin/group·kh·kw × output pixels ×
// batch) is written once and read twice (packing, then the GEMM). It is 0
// for 1×1 stride-1 convs, which need no lowering, and when shapes are unknown.
func im2colBytes(n *ir.Node) int64 {
	w, y := n.In(1), n.Outputs[0]
	if w == nil || !w.Shape.Static() || !y.Shape.Static() || len(w.Shape) < 3 || len(y.Shape) != len(w.Shape) {
		return 0
	}
	ws, ys := w.Shape.Ints(), y.Shape.Ints()
	k := ws[1] // Cin / group
	spatial := int64(1)
	for i := 2; i < len(ws); i++ {
		k *= ws[i]
		spatial *= ys[i]
	}
	if k == ws[1] && allOnes(n.AttrInts("strides", nil)) {
		return 0
	}
	return 3 * 4 * k * spatial * ys[0]
}

func allOnes(v []int64) bool {
	for _, x := range v {
		if x != 1 {
			return false
		}
	}
	return true
}

// valueElems is the element count of v when its shape is static.
func valueElems(v *ir.Value) (int64, bool) {
	if v == nil || !v.Shape.Static() {
		return 0, false
	}
	return ir.NumElements(v.Shape.Ints()), true
}

// transcendental lists the activations (standalone ops and fused
// activation names) whose per-element cost is a transcendental function.
var transcendental = map[string]bool{
	"Gelu": true, "GeluTanh": true, "Erf": true, "Tanh": true, "Sigmoid": true, "SiLU": true,
	"Exp": true, "Log": true, "Softplus": true, "Mish": true, "Elu": true, "Selu": true, "Celu": true,
}

// opFamily maps ops to their OpGFLOPS family; opFamilies are the families.
var (
	opFamily = map[string]string{
		"MatMul": "matmul", "Gemm": "matmul", "FusedMatMul": "matmul", "QMatMul": "matmul",
		"Conv": "conv", "FusedConv": "conv", "ConvTranspose": "conv", "Attention": "attention",
		"MaxPool": "pool", "AveragePool": "pool", "LpPool": "pool",
		"LayerNormalization": "norm", "RMSNormalization": "norm", "BatchNormalization": "norm",
		"InstanceNormalization": "norm", "GroupNormalization": "norm", "Softmax": "norm", "LogSoftmax": "norm", "Fused": "norm",
	}
	opFamilies = map[string]bool{"matmul": true, "conv": true, "pool": true, "norm": true, "attention": true, "act": true}
)

func init() {
	for op := range transcendental {
		if _, ok := opFamily[op]; !ok && op != "GeluTanh" {
			opFamily[op] = "act"
		}
	}
}

// modelCost is NodeCost as the cost model reads it: a gather from a
// constant table (an embedding lookup) reads the rows it outputs, not the
// whole table that NodeCost's traffic count includes.
func modelCost(n *ir.Node) Cost {
	c := NodeCost(n)
	if (n.Op == "Gather" || n.Op == "GatherND") && n.In(0).IsConst() && len(n.Outputs) == 1 {
		table, _ := valueBytes(n.In(0))
		out, ok := valueBytes(n.Outputs[0])
		if ok && out < table {
			c.Bytes += out - table
		}
	}
	return c
}

// Compatible reports whether a value can move from a buffer of device from
// to one of device to without a copy: the same device, or host memory on
// both sides. A nil profile stands for the host (graph inputs and outputs).
func Compatible(from, to *DeviceProfile) bool {
	if from == to {
		return true
	}
	fromHost := from == nil || from.HostVisible
	toHost := to == nil || to.HostVisible
	return fromHost && toHost
}

// TransferUs estimates copying n bytes from device from to device to (nil
// is the host): zero when the buffers are compatible; otherwise the latency
// plus the bytes over the link of each non-host-visible side (a device to
// device copy goes through the host: download, then upload).
func TransferUs(bytes int64, from, to *DeviceProfile) float64 {
	if Compatible(from, to) {
		return 0
	}
	var us float64
	if from != nil && !from.HostVisible {
		us += from.TransferLatencyUs + float64(bytes)/(from.ToHostGBs*1e9)*1e6
	}
	if to != nil && !to.HostVisible {
		us += to.TransferLatencyUs + float64(bytes)/(to.FromHostGBs*1e9)*1e6
	}
	return us
}

// weightHeavy reports whether n multiplies by a constant weight (MatMul,
// Gemm, FusedMatMul, QMatMul with a constant B; Conv, FusedConv with a
// constant W) and returns its batch: the rows that share the weight, M of
// the matmul (the product of the activation's dims but the last) or
// N·OH·OW of a convolution (the product of the output's dims but the
// channels). The batch is -1 when shapes are not static.
func weightHeavy(n *ir.Node) (heavy bool, batch int64) {
	switch n.Op {
	case "MatMul", "Gemm", "FusedMatMul", "QMatMul":
		if !n.In(1).IsConst() {
			return false, 0
		}
		d, ok := dims(n.In(0))
		if !ok || len(d) == 0 {
			return true, -1
		}
		if n.Op == "Gemm" && n.Attrs["transA"] != nil && n.Attrs["transA"].Int != 0 && len(d) == 2 {
			return true, d[1]
		}
		return true, prod(d[:len(d)-1])
	case "Conv", "FusedConv":
		if !n.In(1).IsConst() || len(n.Outputs) == 0 {
			return false, 0
		}
		d, ok := dims(n.Outputs[0])
		if !ok || len(d) < 2 {
			return true, -1
		}
		return true, d[0] * prod(d[2:])
	}
	return false, 0
}
