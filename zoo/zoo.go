package zoo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weftrt/weft/ir"
)

// Options adjusts a named model (zero fields keep the model's defaults).
type Options struct {
	Batch    int   // batch size (default 1)
	Seq      int   // sequence length, transformers only (default: the model's)
	Seed     int64 // weight seed
	Symbolic bool  // symbolic batch (and sequence) dimensions
}

// entry is one named model.
type entry struct {
	about string
	build func(o Options) (*ir.Graph, error)
}

var models = map[string]entry{
	"resnet50": {"ResNet-50, input [batch,3,224,224], 1000 classes", func(o Options) (*ir.Graph, error) {
		c := ResNet50Config(max(o.Batch, 1), o.Seed)
		c.SymbolicBatch = o.Symbolic
		return ResNet(c)
	}},
	"resnet18": {"ResNet-18, input [batch,3,224,224], 1000 classes", func(o Options) (*ir.Graph, error) {
		c := ResNet18Config(max(o.Batch, 1), o.Seed)
		c.SymbolicBatch = o.Symbolic
		return ResNet(c)
	}},
	"bert-base": {"BERT-base encoder (12 layers, 768, 12 heads, vocab 30522), seq 128, with attention mask", func(o Options) (*ir.Graph, error) {
		return BERT(o.apply(BERTBase()))
	}},
	"bert-4l": {"BERT-base cut to 4 layers, seq 128, with attention mask", func(o Options) (*ir.Graph, error) {
		return BERT(o.apply(BERT4L()))
	}},
	"gpt-6l": {"GPT-2-style decoder: 6 layers, 512, 8 heads, vocab 32000, seq 64", func(o Options) (*ir.Graph, error) {
		return GPT(o.apply(GPT6L()))
	}},
}

func (o Options) apply(c TransformerConfig) TransformerConfig {
	if o.Batch > 0 {
		c.Batch = o.Batch
	}
	if o.Seq > 0 {
		c.Seq = o.Seq
		if c.MaxPositions < c.Seq {
			c.MaxPositions = c.Seq
		}
	}
	c.Seed = o.Seed
	c.Symbolic = o.Symbolic
	return c
}

// Names returns the names Build knows, sorted.
func Names() []string {
	names := make([]string, 0, len(models))
	for k := range models {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// About describes the named model ("" for an unknown name).
func About(name string) string { return models[name].about }

// Build builds the named model (see Names).
func Build(name string, o Options) (*ir.Graph, error) {
	e, ok := models[name]
	if !ok {
		return nil, fmt.Errorf("zoo: unknown model %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	if o.Batch < 0 || o.Seq < 0 {
		return nil, fmt.Errorf("zoo: %s: batch %d and seq %d must not be negative", name, o.Batch, o.Seq)
	}
	return e.build(o)
}
