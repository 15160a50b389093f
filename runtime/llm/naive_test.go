package llm_test

import (
	"encoding/binary"
	"fmt"
	"math"
)

// naive is a plain llama2.c forward pass written from the architecture in
// /work/shared/models/README.md — loops over float64 slices, weights read
// straight from the checkpoint bytes in their [out, in] layout — and
// independent of frontend/llama and of every weft kernel. It is the oracle
// of the acceptance test.
type naive struct {
	dim, hidden, layers, heads, kvHeads, vocab, seq                   int
	embed, rmsAtt, wq, wk, wv, wo, rmsFFN, w1, w2, w3, rmsFinal, wcls []float64
	keys, vals                                                        [][]float64 // per layer [seq][kvDim]
}

func newNaive(data []byte) (*naive, error) {
	if len(data) < 28 {
		return nil, fmt.Errorf("short file")
	}
	h := make([]int, 7)
	for i := range h {
		h[i] = int(int32(binary.LittleEndian.Uint32(data[4*i:])))
	}
	n := &naive{dim: h[0], hidden: h[1], layers: h[2], heads: h[3], kvHeads: h[4], vocab: h[5], seq: h[6]}
	shared := n.vocab > 0
	if !shared {
		n.vocab = -n.vocab
	}
	off := 28
	next := func(count int) []float64 {
		out := make([]float64, count)
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:])))
		}
		off += 4 * count
		return out
	}
	d, hd := n.dim, n.dim/n.heads
	kv := n.kvHeads * hd
	n.embed = next(n.vocab * d)
	n.rmsAtt = next(n.layers * d)
	n.wq = next(n.layers * d * d)
	n.wk = next(n.layers * kv * d)
	n.wv = next(n.layers * kv * d)
	n.wo = next(n.layers * d * d)
	n.rmsFFN = next(n.layers * d)
	n.w1 = next(n.layers * n.hidden * d)
	n.w2 = next(n.layers * d * n.hidden)
	n.w3 = next(n.layers * n.hidden * d)
	n.rmsFinal = next(d)
	off += 2 * 4 * n.seq * hd / 2 // the legacy RoPE tables
	if shared {
		n.wcls = n.embed
	} else {
		n.wcls = next(n.vocab * d)
	}
	if off != len(data) {
		return nil, fmt.Errorf("file is %d bytes, read %d", len(data), off)
	}
	n.keys = make([][]float64, n.layers)
	n.vals = make([][]float64, n.layers)
	return n, nil
}

func rmsnorm(x, w []float64) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+float64(float32(1e-5)))
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] * r * w[i]
	}
	return out
}

// matvec is y = W·x with W [out, in] row-major.
func matvec(w, x []float64, out int) []float64 {
	in := len(x)
	y := make([]float64, out)
	for o := 0; o < out; o++ {
		s := 0.0
		for i := 0; i < in; i++ {
			s += w[o*in+i] * x[i]
		}
		y[o] = s
	}
	return y
}

// forward runs token tok at position pos (the cache holds pos earlier
// tokens) and returns the logits.
func (n *naive) forward(tok, pos int) []float64 {
	d, hd := n.dim, n.dim/n.heads
	kvDim := n.kvHeads * hd
	x := append([]float64(nil), n.embed[tok*d:(tok+1)*d]...)
	rope := func(v []float64) {
		for i := 0; i < len(v); i += 2 {
			j := i % hd
			angle := float64(pos) * math.Pow(10000, -float64(j)/float64(hd))
			c, s := math.Cos(angle), math.Sin(angle)
			a, b := v[i], v[i+1]
			v[i], v[i+1] = a*c-b*s, a*s+b*c
		}
	}
	for l := 0; l < n.layers; l++ {
		xb := rmsnorm(x, n.rmsAtt[l*d:(l+1)*d])
		q := matvec(n.wq[l*d*d:(l+1)*d*d], xb, d)
		k := matvec(n.wk[l*kvDim*d:(l+1)*kvDim*d], xb, kvDim)
		v := matvec(n.wv[l*kvDim*d:(l+1)*kvDim*d], xb, kvDim)
		rope(q)
		rope(k)
		n.keys[l] = append(n.keys[l][:pos*kvDim], k...)
		n.vals[l] = append(n.vals[l][:pos*kvDim], v...)
		att := naiveAttention(q, n.keys[l], n.vals[l], pos, n.heads, n.kvHeads, hd)
		o := matvec(n.wo[l*d*d:(l+1)*d*d], att, d)
		for i := range x {
			x[i] += o[i]
		}
		xb = rmsnorm(x, n.rmsFFN[l*d:(l+1)*d])
		h1 := matvec(n.w1[l*n.hidden*d:(l+1)*n.hidden*d], xb, n.hidden)
		h3 := matvec(n.w3[l*n.hidden*d:(l+1)*n.hidden*d], xb, n.hidden)
		for i := range h1 {
			h1[i] = h1[i] / (1 + math.Exp(-h1[i])) * h3[i]
		}
		o = matvec(n.w2[l*d*n.hidden:(l+1)*d*n.hidden], h1, d)
		for i := range x {
			x[i] += o[i]
		}
	}
	x = rmsnorm(x, n.rmsFinal)
	return matvec(n.wcls, x, n.vocab)
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// naiveAttention is causal softmax attention of one query position pos over
// the cached keys and values ([t][kvHeads·hd]), with grouped-query heads:
// query head h reads key/value head h / (heads/kvHeads).
func naiveAttention(q, keys, vals []float64, pos, heads, kvHeads, hd int) []float64 {
	kvDim := kvHeads * hd
	att := make([]float64, heads*hd)
	group := heads / kvHeads
	for h := 0; h < heads; h++ {
		kh := h / group
		scores := make([]float64, pos+1)
		mx := math.Inf(-1)
		for t := 0; t <= pos; t++ {
			s := 0.0
			for i := 0; i < hd; i++ {
				s += q[h*hd+i] * keys[t*kvDim+kh*hd+i]
			}
			scores[t] = s / math.Sqrt(float64(hd))
			mx = math.Max(mx, scores[t])
		}
		sum := 0.0
		for t := range scores {
			scores[t] = math.Exp(scores[t] - mx)
			sum += scores[t]
		}
		for t := range scores {
			for i := 0; i < hd; i++ {
				att[h*hd+i] += scores[t] / sum * vals[t*kvDim+kh*hd+i]
			}
		}
	}
	return att
}
