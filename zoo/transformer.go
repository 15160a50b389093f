package zoo

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// TransformerConfig describes a BERT encoder (Hugging Face BertModel as
// exported) for BERT, or a GPT-2-style decoder for GPT.
type TransformerConfig struct {
	Layers, Hidden, Heads, FFN int
	Seq, Vocab, Batch          int
	MaxPositions               int     // position table size (512 for BERT, 1024 for GPT-2); at least Seq
	TypeVocab                  int     // token type table size (2); BERT only
	Eps                        float32 // LayerNorm epsilon (1e-12 BERT, 1e-5 GPT-2)
	// AttentionMask adds the input attention_mask f32 [batch, seq] (1 keep,
	// 0 pad), made additive as exporters do: (1 - mask) · -10000. BERT only.
	AttentionMask bool
	// Pooler adds BERT's pooler (first token → dense → tanh) as the second
	// output "pooler_output".
	Pooler bool
	// Symbolic declares batch and sequence length as the symbols "batch"
	// and "seq"; shapes are then computed at run time (Shape, Gather,
	// Unsqueeze, Concat, Slice) as in a dynamic-axes export.
	Symbolic bool
	Seed     int64
}

// BERTBase is bert-base-uncased: 12 layers, hidden 768, 12 heads, FFN 3072,
// vocabulary 30522, 512 positions, with attention mask, at batch 1 and
// sequence 128 (about 109M parameters with the pooler).
func BERTBase() TransformerConfig {
	return TransformerConfig{Layers: 12, Hidden: 768, Heads: 12, FFN: 3072, Seq: 128, Vocab: 30522, Batch: 1,
		MaxPositions: 512, TypeVocab: 2, Eps: 1e-12, AttentionMask: true}
}

// BERT4L is BERT-base cut to 4 layers (the ONNX Runtime reference figure in
// PERFORMANCE.md), sequence 128.
func BERT4L() TransformerConfig {
	c := BERTBase()
	c.Layers = 4
	return c
}

// GPT6L is a 6-layer GPT-2-style decoder: hidden 512, 8 heads, FFN 2048,
// vocabulary 32000, sequence 64, 1024 positions.
func GPT6L() TransformerConfig {
	return TransformerConfig{Layers: 6, Hidden: 512, Heads: 8, FFN: 2048, Seq: 64, Vocab: 32000, Batch: 1,
		MaxPositions: 1024, Eps: 1e-5}
}

func (c TransformerConfig) check(gpt bool) error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", c.Layers}, {"hidden", c.Hidden}, {"heads", c.Heads}, {"ffn", c.FFN},
		{"seq", c.Seq}, {"vocab", c.Vocab}, {"batch", c.Batch}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s is %d, must be positive", f.name, f.v))
		}
	}
	if c.Heads > 0 && c.Hidden%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("hidden %d is not a multiple of heads %d", c.Hidden, c.Heads))
	}
	if c.MaxPositions < c.Seq {
		errs = append(errs, fmt.Errorf("max positions %d < seq %d", c.MaxPositions, c.Seq))
	}
	if !gpt && c.TypeVocab < 1 {
		errs = append(errs, fmt.Errorf("token type vocabulary %d must be positive", c.TypeVocab))
	}
	if !(c.Eps > 0) {
		errs = append(errs, fmt.Errorf("epsilon %v must be positive", c.Eps))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("zoo: transformer config: %w", err)
	}
	return nil
}

// BERTParams returns the trainable parameter count of BERT(c).
func (c TransformerConfig) BERTParams() int64 {
	h, f := int64(c.Hidden), int64(c.FFN)
	n := int64(c.Vocab+c.MaxPositions+c.TypeVocab)*h + 2*h
	layer := 4*(h*h+h) + 2*h + (h*f + f) + (f*h + h) + 2*h
	n += int64(c.Layers) * layer
	if c.Pooler {
		n += h*h + h
	}
	return n
}

// GPTParams returns the trainable parameter count of GPT(c) (the vocabulary
// head is a separate weight, not tied to the token embedding).
func (c TransformerConfig) GPTParams() int64 {
	h, f := int64(c.Hidden), int64(c.FFN)
	n := int64(c.Vocab+c.MaxPositions) * h
	layer := 2*h + (3*h*h + 3*h) + (h*h + h) + 2*h + (h*f + f) + (f*h + h)
	return n + int64(c.Layers)*layer + 2*h + h*int64(c.Vocab)
}

// tf holds what both transformer builders share.
type tf struct {
	*mb
	c TransformerConfig
}

// posIDs returns the position ids [1, seq]: a constant, or with symbolic
// dims a Slice of the [1, MaxPositions] position buffer up to the run-time
// sequence length.
func (t *tf) posIDs(scope string, ids *ir.Value) *ir.Value {
	if !t.c.Symbolic {
		pos := make([]int64, t.c.Seq)
		for i := range pos {
			pos[i] = int64(i)
		}
		return t.konst(ir.FromInt64([]int64{1, int64(t.c.Seq)}, pos))
	}
	pos := make([]int64, t.c.MaxPositions)
	for i := range pos {
		pos[i] = int64(i)
	}
	buf := t.b.Const(scope+".position_ids", ir.FromInt64([]int64{1, int64(t.c.MaxPositions)}, pos))
	seq := t.dimOf("/"+scope, ids, 1)
	return t.op("/"+scope, "Slice", nil, buf, t.i64s(0), seq, t.i64s(1))
}

// heads reshapes [B,S,H] to [B,S,heads,D] and transposes with perm.
func (t *tf) heads(scope string, x *ir.Value, perm ...int64) *ir.Value {
	d := int64(t.c.Hidden / t.c.Heads)
	var shape *ir.Value
	if t.c.Symbolic {
		shape = t.op(scope, "Concat", []ir.AttrOption{ir.Int("axis", 0)},
			t.dimOf(scope, x, 0), t.dimOf(scope, x, 1), t.i64s(int64(t.c.Heads)), t.i64s(d))
	} else {
		shape = t.i64s(int64(t.c.Batch), int64(t.c.Seq), int64(t.c.Heads), d)
	}
	y := t.op(scope, "Reshape", nil, x, shape)
	return t.op(scope, "Transpose", []ir.AttrOption{ir.Ints("perm", perm...)}, y)
}

// merge turns the attention context [B,heads,S,D] back into [B,S,H].
func (t *tf) merge(scope string, ctx *ir.Value) *ir.Value {
	y := t.op(scope, "Transpose", []ir.AttrOption{ir.Ints("perm", 0, 2, 1, 3)}, ctx)
	var shape *ir.Value
	if t.c.Symbolic {
		shape = t.op(scope, "Concat", []ir.AttrOption{ir.Int("axis", 0)},
			t.dimOf(scope, y, 0), t.dimOf(scope, y, 1), t.i64s(int64(t.c.Hidden)))
	} else {
		shape = t.i64s(int64(t.c.Batch), int64(t.c.Seq), int64(t.c.Hidden))
	}
	return t.op(scope, "Reshape", nil, y, shape)
}

// scores is softmax(Q·Kᵀ / √D + mask) · V with Q, V as [B,heads,S,D] and
// K as [B,heads,D,S]; mask applies it (additive or Where) when not nil.
func (t *tf) attend(scope string, q, kT, v *ir.Value, mask func(*ir.Value) *ir.Value) *ir.Value {
	d := float64(t.c.Hidden / t.c.Heads)
	s := t.op(scope, "MatMul", nil, q, kT)
	s = t.op(scope, "Div", nil, s, t.f32(float32(math.Sqrt(d))))
	if mask != nil {
		s = mask(s)
	}
	p := t.op(scope, "Softmax", []ir.AttrOption{ir.Int("axis", -1)}, s)
	return t.op(scope, "MatMul", nil, p, v)
}

// BERT builds an encoder: inputs input_ids i64 [batch, seq] (and
// attention_mask f32 [batch, seq]); outputs last_hidden_state f32
// [batch, seq, hidden] (and pooler_output f32 [batch, hidden]).
func BERT(c TransformerConfig) (*ir.Graph, error) {
	if err := c.check(false); err != nil {
		return nil, err
	}
	t := &tf{mb: newMB("bert", c.Seed), c: c}
	B, S := sym(c.Symbolic, "batch", c.Batch), sym(c.Symbolic, "seq", c.Seq)
	ids := t.b.Input("input_ids", ir.Int64, ir.Shape{B, S})
	var mask *ir.Value
	if c.AttentionMask {
		am := t.b.Input("attention_mask", ir.Float32, ir.Shape{B, S})
		u := t.op("/bert", "Unsqueeze", nil, am, t.i64s(1))
		u = t.op("/bert", "Unsqueeze", nil, u, t.i64s(2))
		u = t.op("/bert", "Sub", nil, t.f32(1), u)
		mask = t.op("/bert", "Mul", nil, u, t.f32(-10000))
	}
	h := int64(c.Hidden)
	const emb = "bert.embeddings"
	word := t.uniform(emb+".word_embeddings.weight", -0.035, 0.035, int64(c.Vocab), h)
	posT := t.uniform(emb+".position_embeddings.weight", -0.035, 0.035, int64(c.MaxPositions), h)
	typT := t.uniform(emb+".token_type_embeddings.weight", -0.035, 0.035, int64(c.TypeVocab), h)
	var types *ir.Value
	if c.Symbolic {
		types = t.op("/bert/embeddings", "ConstantOfShape", []ir.AttrOption{ir.TensorAttr("value", ir.FromInt64([]int64{1}, []int64{0}))},
			t.op("/bert/embeddings", "Shape", nil, ids))
	} else {
		types = t.konst(ir.NewTensor(ir.Int64, []int64{1, int64(c.Seq)}))
	}
	gather := []ir.AttrOption{ir.Int("axis", 0)}
	x := t.op("/bert/embeddings/word_embeddings", "Gather", gather, word, ids)
	ty := t.op("/bert/embeddings/token_type_embeddings", "Gather", gather, typT, types)
	x = t.op("/bert/embeddings", "Add", nil, x, ty)
	ps := t.op("/bert/embeddings/position_embeddings", "Gather", gather, posT, t.posIDs(emb, ids))
	x = t.op("/bert/embeddings", "Add", nil, x, ps)
	x = t.layerNorm("/bert/embeddings/LayerNorm", emb+".LayerNorm", x, c.Hidden, c.Eps)
	for i := 0; i < c.Layers; i++ {
		x = t.bertLayer(i, x, mask)
	}
	t.output("last_hidden_state", x)
	if c.Pooler {
		first := t.op("/bert/pooler", "Gather", []ir.AttrOption{ir.Int("axis", 1)}, x, t.i64(0))
		bound := float32(math.Sqrt(3 / float64(c.Hidden)))
		pw := t.uniform("bert.pooler.dense.weight", -bound, bound, h, h)
		pb := t.uniform("bert.pooler.dense.bias", -0.02, 0.02, h)
		p := t.op("/bert/pooler/dense", "Gemm", []ir.AttrOption{ir.Float("alpha", 1), ir.Float("beta", 1), ir.Int("transB", 1)}, first, pw, pb)
		t.output("pooler_output", t.op("/bert/pooler/activation", "Tanh", nil, p))
	}
	return t.build()
}

func (t *tf) bertLayer(i int, x, mask *ir.Value) *ir.Value {
	c := t.c
	p := "bert.encoder.layer." + strconv.Itoa(i)
	sc := "/bert/encoder/layer." + strconv.Itoa(i)
	att := sc + "/attention/self"
	q := t.linear(att+"/query", p+".attention.self.query", x, c.Hidden, c.Hidden, true)
	k := t.linear(att+"/key", p+".attention.self.key", x, c.Hidden, c.Hidden, true)
	v := t.linear(att+"/value", p+".attention.self.value", x, c.Hidden, c.Hidden, true)
	q = t.heads(att, q, 0, 2, 1, 3)
	k = t.heads(att, k, 0, 2, 3, 1)
	v = t.heads(att, v, 0, 2, 1, 3)
	var addMask func(*ir.Value) *ir.Value
	if mask != nil {
		addMask = func(s *ir.Value) *ir.Value { return t.op(att, "Add", nil, s, mask) }
	}
	ctx := t.merge(att, t.attend(att, q, k, v, addMask))
	o := t.linear(sc+"/attention/output/dense", p+".attention.output.dense", ctx, c.Hidden, c.Hidden, true)
	o = t.op(sc+"/attention/output", "Add", nil, o, x)
	x = t.layerNorm(sc+"/attention/output/LayerNorm", p+".attention.output.LayerNorm", o, c.Hidden, c.Eps)
	f := t.linear(sc+"/intermediate/dense", p+".intermediate.dense", x, c.Hidden, c.FFN, true)
	f = t.geluErf(sc+"/intermediate/intermediate_act_fn", f)
	f = t.linear(sc+"/output/dense", p+".output.dense", f, c.FFN, c.Hidden, true)
	f = t.op(sc+"/output", "Add", nil, f, x)
	return t.layerNorm(sc+"/output/LayerNorm", p+".output.LayerNorm", f, c.Hidden, c.Eps)
}

// geluErf is torch's exact GELU as exported before opset 20:
// x · (erf(x / √2) + 1) · 0.5.
func (t *tf) geluErf(scope string, x *ir.Value) *ir.Value {
	d := t.op(scope, "Div", nil, x, t.f32(float32(math.Sqrt2)))
	e := t.op(scope, "Erf", nil, d)
	a := t.op(scope, "Add", nil, e, t.f32(1))
	m := t.op(scope, "Mul", nil, x, a)
	return t.op(scope, "Mul", nil, m, t.f32(0.5))
}

// geluTanh is GPT-2's gelu_new:
// 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
func (t *tf) geluTanh(scope string, x *ir.Value) *ir.Value {
	half := t.op(scope, "Mul", nil, t.f32(0.5), x)
	cube := t.op(scope, "Pow", nil, x, t.f32(3))
	inner := t.op(scope, "Mul", nil, t.f32(0.044715), cube)
	inner = t.op(scope, "Add", nil, x, inner)
	inner = t.op(scope, "Mul", nil, t.f32(float32(math.Sqrt(2/math.Pi))), inner)
	th := t.op(scope, "Tanh", nil, inner)
	one := t.op(scope, "Add", nil, t.f32(1), th)
	return t.op(scope, "Mul", nil, half, one)
}

// GPT builds a GPT-2-style decoder (pre-LayerNorm, fused QKV projection
// split three ways, causal mask applied with Where, tanh GELU, untied
// vocabulary head): input input_ids i64 [batch, seq], output logits f32
// [batch, seq, vocab]. TypeVocab, AttentionMask and Pooler are ignored.
func GPT(c TransformerConfig) (*ir.Graph, error) {
	if err := c.check(true); err != nil {
		return nil, err
	}
	t := &tf{mb: newMB("gpt", c.Seed), c: c}
	B, S := sym(c.Symbolic, "batch", c.Batch), sym(c.Symbolic, "seq", c.Seq)
	ids := t.b.Input("input_ids", ir.Int64, ir.Shape{B, S})
	h := int64(c.Hidden)
	wte := t.uniform("transformer.wte.weight", -0.035, 0.035, int64(c.Vocab), h)
	wpe := t.uniform("transformer.wpe.weight", -0.017, 0.017, int64(c.MaxPositions), h)
	gather := []ir.AttrOption{ir.Int("axis", 0)}
	x := t.op("/transformer/wte", "Gather", gather, wte, ids)
	ps := t.op("/transformer/wpe", "Gather", gather, wpe, t.posIDs("transformer", ids))
	x = t.op("/transformer", "Add", nil, x, ps)
	causal := t.causalMask(ids)
	minVal := t.f32(-math.MaxFloat32)
	for i := 0; i < c.Layers; i++ {
		x = t.gptLayer(i, x, causal, minVal)
	}
	x = t.layerNorm("/transformer/ln_f", "transformer.ln_f", x, c.Hidden, c.Eps)
	bound := float32(math.Sqrt(3 / float64(c.Hidden)))
	head := t.uniform("lm_head.weight", -bound, bound, h, int64(c.Vocab))
	t.output("logits", t.op("/lm_head", "MatMul", nil, x, head))
	return t.build()
}

// causalMask is the bool [1,1,S,S] lower-triangular mask (true = attend):
// a constant, or with symbolic dims a Slice of the [1,1,P,P] buffer.
func (t *tf) causalMask(ids *ir.Value) *ir.Value {
	n := t.c.Seq
	if t.c.Symbolic {
		n = t.c.MaxPositions
	}
	m := ir.NewTensor(ir.Bool, []int64{1, 1, int64(n), int64(n)})
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			m.Data[i*n+j] = 1
		}
	}
	if !t.c.Symbolic {
		return t.konst(m)
	}
	buf := t.b.Const("transformer.causal_mask", m)
	seq := t.dimOf("/transformer", ids, 1)
	end := t.op("/transformer", "Concat", []ir.AttrOption{ir.Int("axis", 0)}, seq, seq)
	return t.op("/transformer", "Slice", nil, buf, t.i64s(0, 0), end, t.i64s(2, 3))
}

func (t *tf) gptLayer(i int, x, causal, minVal *ir.Value) *ir.Value {
	c := t.c
	p := "transformer.h." + strconv.Itoa(i)
	sc := "/transformer/h." + strconv.Itoa(i)
	a := t.layerNorm(sc+"/ln_1", p+".ln_1", x, c.Hidden, c.Eps)
	qkv := t.linear(sc+"/attn/c_attn", p+".attn.c_attn", a, c.Hidden, 3*c.Hidden, true)
	hh := int64(c.Hidden)
	parts := t.opN(sc+"/attn", "Split", 3, []ir.AttrOption{ir.Int("axis", 2)}, qkv, t.i64s(hh, hh, hh))
	att := sc + "/attn"
	q := t.heads(att, parts[0], 0, 2, 1, 3)
	k := t.heads(att, parts[1], 0, 2, 3, 1)
	v := t.heads(att, parts[2], 0, 2, 1, 3)
	where := func(s *ir.Value) *ir.Value { return t.op(att, "Where", nil, causal, s, minVal) }
	ctx := t.merge(att, t.attend(att, q, k, v, where))
	o := t.linear(att+"/c_proj", p+".attn.c_proj", ctx, c.Hidden, c.Hidden, true)
	x = t.op(sc, "Add", nil, o, x)
	m := t.layerNorm(sc+"/ln_2", p+".ln_2", x, c.Hidden, c.Eps)
	f := t.linear(sc+"/mlp/c_fc", p+".mlp.c_fc", m, c.Hidden, c.FFN, true)
	f = t.geluTanh(sc+"/mlp/act", f)
	f = t.linear(sc+"/mlp/c_proj", p+".mlp.c_proj", f, c.FFN, c.Hidden, true)
	return t.op(sc, "Add", nil, f, x)
}
