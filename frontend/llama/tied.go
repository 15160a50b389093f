package llama

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// Tied embeddings: the classifier is the transposed embedding table. Every
// graph built from one Weights (a model's prefill and decode graphs) uses
// the same transposed copy, made once per embedding tensor, so that the
// graphs share it (and the CPU backend's packing of it) instead of each
// holding its own. The copy lives as long as the embedding tensor does (the
// map holds the embedding weakly; a cleanup on it drops the entry). Like
// the graphs, which reference the weights without copying, it assumes the
// embedding's data does not change once a graph is built.
var (
	tiedMu sync.Mutex
	tied   = map[weak.Pointer[ir.Tensor]]*ir.Tensor{}
)

// tiedOutput returns the classifier of tied embeddings: embed itself
// when it is kept in a QMatMul format ([Vocab, Dim] is QMatMul's [out, in]),
// else the [Dim, Vocab] f32 transpose of embed (decoded first when it is
// kept in another format), shared by every caller with the same embedding
// tensor.
func tiedOutput(embed *ir.Tensor) (*ir.Tensor, error) {
	if embed.DType != ir.Float32 && quantizedMatMul[embed.DType] {
		return embed, nil
	}
	tiedMu.Lock()
	defer tiedMu.Unlock()
	key := weak.Make(embed)
	if out, ok := tied[key]; ok {
		return out, nil
	}
	f32 := embed
	if embed.DType != ir.Float32 {
		var err error
		if f32, err = quant.Dequantize(embed); err != nil {
			return nil, fmt.Errorf("llama: tied classifier from the %v embedding: %w", embed.DType, err)
		}
	}
	out := Transpose2D(f32)
	tied[key] = out
	runtime.AddCleanup(embed, func(k weak.Pointer[ir.Tensor]) {
		tiedMu.Lock()
		defer tiedMu.Unlock()
		delete(tied, k)
	}, key)
	return out, nil
}
