package zoo

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// ResNetConfig describes a torchvision-style ResNet (v1.5: the stride of a
// bottleneck block sits on its 3x3 convolution).
type ResNetConfig struct {
	Blocks     []int // blocks per stage: [2,2,2,2] ResNet-18, [3,4,6,3] ResNet-50
	Bottleneck bool  // 1x1-3x3-1x1 blocks with expansion 4 (else basic 3x3-3x3 blocks)
	Width      int   // stem and first-stage width; stages use Width·(1, 2, 4, 8); 64 in the paper
	Batch      int
	ImageSize  int // square input side; 224 for ImageNet
	Classes    int
	Seed       int64
	// SymbolicBatch declares the input's batch dimension as the symbol "batch".
	SymbolicBatch bool
}

// ResNet50Config is the ImageNet ResNet-50 (about 25.6M parameters).
func ResNet50Config(batch int, seed int64) ResNetConfig {
	return ResNetConfig{Blocks: []int{3, 4, 6, 3}, Bottleneck: true, Width: 64, Batch: batch,
		ImageSize: 224, Classes: 1000, Seed: seed}
}

// ResNet18Config is the ImageNet ResNet-18 (about 11.7M parameters).
func ResNet18Config(batch int, seed int64) ResNetConfig {
	return ResNetConfig{Blocks: []int{2, 2, 2, 2}, Width: 64, Batch: batch,
		ImageSize: 224, Classes: 1000, Seed: seed}
}

// ResNet50 builds ResNet-50 for input [batch,3,224,224]. It panics if batch < 1.
func ResNet50(batch int, seed int64) *ir.Graph { return must(ResNet(ResNet50Config(batch, seed))) }

// ResNet18 builds ResNet-18 for input [batch,3,224,224]. It panics if batch < 1.
func ResNet18(batch int, seed int64) *ir.Graph { return must(ResNet(ResNet18Config(batch, seed))) }

func must(g *ir.Graph, err error) *ir.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

func (c ResNetConfig) check() error {
	var errs []error
	if len(c.Blocks) == 0 {
		errs = append(errs, errors.New("no stages"))
	}
	for i, n := range c.Blocks {
		if n < 1 {
			errs = append(errs, fmt.Errorf("stage %d has %d blocks", i+1, n))
		}
	}
	if c.Width < 1 || c.Batch < 1 || c.Classes < 1 {
		errs = append(errs, fmt.Errorf("width %d, batch %d and classes %d must be positive", c.Width, c.Batch, c.Classes))
	}
	if c.ImageSize < 1<<len(c.Blocks) {
		errs = append(errs, fmt.Errorf("image size %d is too small for %d stages", c.ImageSize, len(c.Blocks)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("zoo: resnet config: %w", err)
	}
	return nil
}

func (c ResNetConfig) expansion() int {
	if c.Bottleneck {
		return 4
	}
	return 1
}

// Params returns the number of trainable parameters (as PyTorch counts
// them: convolution and linear weights and biases, BatchNormalization scale
// and shift, not its running statistics).
func (c ResNetConfig) Params() int64 {
	conv := func(in, out, k int) int64 { return int64(in * out * k * k) }
	bn := func(ch int) int64 { return int64(2 * ch) }
	w := c.Width
	n := conv(3, w, 7) + bn(w)
	in := w
	for s, blocks := range c.Blocks {
		width := w << s
		out := width * c.expansion()
		for i := 0; i < blocks; i++ {
			if c.Bottleneck {
				n += conv(in, width, 1) + bn(width) + conv(width, width, 3) + bn(width) + conv(width, out, 1) + bn(out)
			} else {
				n += conv(in, width, 3) + bn(width) + conv(width, width, 3) + bn(width)
			}
			if i == 0 && (in != out || s > 0) {
				n += conv(in, out, 1) + bn(out)
			}
			in = out
		}
	}
	return n + int64(in*c.Classes+c.Classes)
}

// ResNet builds the model: input "input" f32 [batch,3,H,W], output "output"
// f32 [batch,classes] (logits).
func ResNet(c ResNetConfig) (*ir.Graph, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	depth := 0
	for _, n := range c.Blocks {
		depth += n
	}
	name := "resnet"
	if c.Bottleneck {
		name += strconv.Itoa(3*depth + 2)
	} else {
		name += strconv.Itoa(2*depth + 2)
	}
	m := newMB(name, c.Seed)
	r := &resnet{mb: m, c: c}
	hw := int64(c.ImageSize)
	x := m.b.Input("input", ir.Float32, ir.Shape{sym(c.SymbolicBatch, "batch", c.Batch), {Size: 3}, {Size: hw}, {Size: hw}})
	y := r.convBN("", "conv1", "bn1", x, 3, c.Width, 7, 2, true)
	y = m.op("/maxpool", "MaxPool", []ir.AttrOption{ir.Int("ceil_mode", 0), ir.Ints("dilations", 1, 1),
		ir.Ints("kernel_shape", 3, 3), ir.Ints("pads", 1, 1, 1, 1), ir.Ints("strides", 2, 2)}, y)
	in := c.Width
	for s, blocks := range c.Blocks {
		width := c.Width << s
		for i := 0; i < blocks; i++ {
			stride := 1
			if i == 0 && s > 0 {
				stride = 2
			}
			y = r.block("layer"+strconv.Itoa(s+1)+"."+strconv.Itoa(i), y, in, width, stride)
			in = width * c.expansion()
		}
	}
	y = m.op("/avgpool", "GlobalAveragePool", nil, y)
	y = m.op("", "Flatten", []ir.AttrOption{ir.Int("axis", 1)}, y)
	bound := float32(1 / math.Sqrt(float64(in)))
	fw := m.uniform("fc.weight", -bound, bound, int64(c.Classes), int64(in))
	fb := m.uniform("fc.bias", -bound, bound, int64(c.Classes))
	y = m.op("/fc", "Gemm", []ir.AttrOption{ir.Float("alpha", 1), ir.Float("beta", 1), ir.Int("transB", 1)}, y, fw, fb)
	m.output("output", y)
	return m.build()
}

type resnet struct {
	*mb
	c ResNetConfig
}

// scopeOf turns a parameter prefix ("layer1.0") into torch.onnx's node scope
// ("/layer1/layer1.0").
func scopeOf(prefix string) string {
	if prefix == "" {
		return ""
	}
	for i := 0; i < len(prefix); i++ {
		if prefix[i] == '.' {
			return "/" + prefix[:i] + "/" + prefix
		}
	}
	return "/" + prefix
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// convBN is Conv (no bias) → BatchNormalization [→ Relu]. Weights use He
// initialisation; the statistics are random but sane (var in [0.5, 1.5]).
// A block's last BN gets a small scale so that residual sums stay moderate,
// as in trained networks.
func (r *resnet) convBN(prefix, conv, bn string, x *ir.Value, in, out, k, stride int, relu bool) *ir.Value {
	return r.convBNScaled(prefix, conv, bn, x, in, out, k, stride, relu, false)
}

func (r *resnet) convBNScaled(prefix, conv, bn string, x *ir.Value, in, out, k, stride int, relu, last bool) *ir.Value {
	m := r.mb
	scope := scopeOf(prefix)
	pad := int64(k / 2)
	bound := float32(math.Sqrt(6 / float64(in*k*k)))
	w := m.uniform(join(prefix, conv)+".weight", -bound, bound, int64(out), int64(in), int64(k), int64(k))
	y := m.op(scope+"/"+conv, "Conv", []ir.AttrOption{ir.Ints("dilations", 1, 1), ir.Int("group", 1),
		ir.Ints("kernel_shape", int64(k), int64(k)), ir.Ints("pads", pad, pad, pad, pad),
		ir.Ints("strides", int64(stride), int64(stride))}, x, w)
	p := join(prefix, bn)
	lo, hi := float32(0.5), float32(1.0)
	if last {
		lo, hi = 0.1, 0.3
	}
	ch := int64(out)
	scale := m.uniform(p+".weight", lo, hi, ch)
	shift := m.uniform(p+".bias", -0.1, 0.1, ch)
	mean := m.uniform(p+".running_mean", -0.1, 0.1, ch)
	variance := m.uniform(p+".running_var", 0.5, 1.5, ch)
	y = m.op(scope+"/"+bn, "BatchNormalization", []ir.AttrOption{ir.Float("epsilon", 1e-5), ir.Float("momentum", 0.9)},
		y, scale, shift, mean, variance)
	if relu {
		y = m.op(scope+"/relu", "Relu", nil, y)
	}
	return y
}

// block is one residual block: basic (3x3, 3x3) or bottleneck (1x1, 3x3,
// 1x1 ×4), with a projection shortcut (1x1 Conv + BN) where the shape changes.
func (r *resnet) block(prefix string, x *ir.Value, in, width, stride int) *ir.Value {
	out := width * r.c.expansion()
	var y *ir.Value
	if r.c.Bottleneck {
		y = r.convBN(prefix, "conv1", "bn1", x, in, width, 1, 1, true)
		y = r.convBN(prefix, "conv2", "bn2", y, width, width, 3, stride, true)
		y = r.convBNScaled(prefix, "conv3", "bn3", y, width, out, 1, 1, false, true)
	} else {
		y = r.convBN(prefix, "conv1", "bn1", x, in, width, 3, stride, true)
		y = r.convBNScaled(prefix, "conv2", "bn2", y, width, width, 3, 1, false, true)
	}
	short := x
	if stride != 1 || in != out {
		short = r.convBN(prefix, "downsample.0", "downsample.1", x, in, out, 1, stride, false)
	}
	scope := scopeOf(prefix)
	y = r.op(scope, "Add", nil, y, short)
	return r.op(scope+"/relu", "Relu", nil, y)
}
