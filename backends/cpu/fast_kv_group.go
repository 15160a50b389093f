package cpu

import "github.com/weftrt/weft/ir"

// KVAttention for query heads that share a KV head (grouped-query
// attention: Qwen2, Llama 3, TinyLlama, SmolLM): one task runs a group of
// the query heads of one KV head together, so that each f16 cache row is
// widened once for the group rather than once per query head. Qwen2-0.5B
// has seven query heads a KV head: its decode attention is bound by the
// widening and the multiply-adds, not by the cache bytes (a 192-position
// cache is 48 KB a KV head), and the per-head kernels widened every row
// seven times.
//
// Q8_0 caches take the grouped path too, on every CPU: each tile is
// widened into scratch once for the group instead of once per query head,
// and each query then runs the per-head path's f32 kernels on it.
//
// The f16 grouped path runs where the kernels exist (AVX-512, head size 64
// or 128) for every number of queries S, so a query's result is the
// same whether it is decoded alone or verified among k drafted tokens: a
// query's arithmetic depends only on its position, never on the other
// queries of the call.

// kvGroupMax is the most queries the accumulation kernel for head size d
// keeps in registers (kvAccumF16G64: 7, kvAccumF16G128: 3); a larger
// group's accumulation runs in passes.
func kvGroupMax(d int) int {
	if d == 128 {
		return 3
	}
	return 7
}

// kvGroupS is the number of queries of a head whose states a grouped task
// keeps in scratch at a time (the cache is read once per kvGroupS).
const kvGroupS = 16

// kvGroupPlan returns the query heads a grouped task runs (gs) and the
// tasks per KV head (nsub) for G query heads a KV head, B·Hkv KV heads and
// the given workers: a KV head's group is split only where there are
// fewer KV heads than workers.
func kvGroupPlan(G, kvHeads, workers int) (gs, nsub int) {
	nsub = 1
	if kvHeads < workers {
		nsub = min(G, (workers+kvHeads-1)/kvHeads)
	}
	gs = (G + nsub - 1) / nsub
	return gs, (G + gs - 1) / gs
}

// grouped reports whether this run takes the grouped path.
func (j *kvAttnJob) grouped() bool {
	switch {
	case j.H == j.Hkv:
		return false
	case j.dt == ir.Float16:
		return j.D == j.Dv && kvGroupKernels(j.D)
	default:
		// Q8_0: a tile is widened into scratch once for the group, then
		// each query runs the one-head f32 kernels on it, as the per-head
		// path does (bit for bit).
		return j.dt == ir.Q8_0
	}
}

// groupTask computes query heads [g0, g0+gs) of KV head kvh of batch b
// (task t = (b·Hkv + kvh)·nsub + sub), kvGroupS queries at a time: per
// tile of cache rows, the scores of all the heads' queries at a position
// at once, each query's online softmax, then the weighted sum of the
// value rows, again at once.
func (j *kvAttnJob) groupTask(w, t int) {
	G := j.H / j.Hkv
	S, D, Dv, P, tile := j.S, j.D, j.Dv, j.P, j.tile
	ch, sub := t/j.nsub, t%j.nsub // cache head b·Hkv+kvh
	b, kvh := ch/j.Hkv, ch%j.Hkv
	g0 := sub * j.gs
	ng := min(G, g0+j.gs) - g0
	h0 := kvh*G + g0 // the first query head
	buf := j.buf[w*j.per : (w+1)*j.per]
	scores := buf[j.scOff : j.scOff+ng*tile]
	krb, vrb := int(j.dt.Bytes(int64(D))), int(j.dt.Bytes(int64(Dv)))
	q8 := j.dt == ir.Q8_0
	lastAll := int64(0)
	for _, p := range j.pos[b*S : (b+1)*S] {
		lastAll = max(lastAll, p)
	}
	for s0 := 0; s0 < S; s0 += kvGroupS {
		sn := min(kvGroupS, S-s0)
		// Query (si, i) is query s0+si of head h0+i: its state and its
		// scaled query.
		st := buf[j.stOff : j.stOff+sn*ng*(Dv+2)]
		qs := buf[j.qsOff : j.qsOff+sn*ng*D]
		last := int64(0)
		for si := 0; si < sn; si++ {
			for i := 0; i < ng; i++ {
				row := (b*j.H+h0+i)*S + s0 + si
				q := qs[(si*ng+i)*D : (si*ng+i+1)*D]
				for k, v := range j.q[row*D : (row+1)*D] {
					q[k] = v * j.scale
				}
				kvInitState(st[(si*ng+i)*(Dv+2) : (si*ng+i+1)*(Dv+2)])
			}
			last = max(last, j.pos[b*S+s0+si])
		}
		j.prefetchHead(ch, min(kvTile, int(last)+1), krb, vrb)
		for j0 := 0; j0 <= int(last); j0 += tile {
			n := min(tile, int(last)+1-j0)
			var kh, vh []uint16
			var kt, vt []float32
			if q8 {
				kt, vt = buf[j.kOff:j.kOff+n*D], buf[j.vOff:j.vOff+n*Dv]
				loadQ8(kt, j.k[(ch*P+j0)*krb:(ch*P+j0+n)*krb])
				loadQ8(vt, j.v[(ch*P+j0)*vrb:(ch*P+j0+n)*vrb])
			} else {
				kh = j.kh[(ch*P+j0)*D : (ch*P+j0+n)*D]
				vh = j.vh[(ch*P+j0)*Dv : (ch*P+j0+n)*Dv]
			}
			for si := 0; si < sn; si++ {
				p := int(j.pos[b*S+s0+si])
				if p < j0 {
					continue
				}
				m := min(n, p+1-j0)
				if q8 {
					for i := 0; i < ng; i++ {
						sc := scores[i*tile : i*tile+m]
						state := st[(si*ng+i)*(Dv+2) : (si*ng+i+1)*(Dv+2)]
						scoresKV(qs[(si*ng+i)*D:(si*ng+i+1)*D], kt, D, m, sc)
						kvSoftmaxStep(state, sc)
						accumKV(state[2:], sc, vt, Dv, m)
					}
					continue
				}
				scoresKVHalfG(qs[si*ng*D:(si+1)*ng*D], ng, kh, D, m, scores, tile)
				for i := 0; i < ng; i++ {
					kvSoftmaxStep(st[(si*ng+i)*(Dv+2):(si*ng+i+1)*(Dv+2)], scores[i*tile:i*tile+m])
				}
				for i0, gm := 0, kvGroupMax(D); i0 < ng; i0 += gm {
					accumKVHalfG(st[(si*ng+i0)*(Dv+2)+2:], Dv+2, min(gm, ng-i0), scores[i0*tile:], tile, vh, Dv, m)
				}
			}
		}
		for si := 0; si < sn; si++ {
			for i := 0; i < ng; i++ {
				row := (b*j.H+h0+i)*S + s0 + si
				kvFinish(st[(si*ng+i)*(Dv+2):(si*ng+i+1)*(Dv+2)], j.y[row*Dv:(row+1)*Dv])
			}
		}
	}
	// The next task's first rows, where it reads another KV head.
	if sub == j.nsub-1 && (ch+1)%j.Hkv != 0 {
		j.prefetchHead(ch+1, min(kvTile, int(lastAll)+1), krb, vrb)
	}
}

// scoresKVHalfGroupGo is the plain-Go meaning of kvScoresF16G64:
// out[i·ldo+c] = q[i·d:(i+1)·d]·k[c·d:(c+1)·d] for i < ng, c < n.
func scoresKVHalfGroupGo(q []float32, ng int, k []uint16, d, n int, out []float32, ldo int) {
	for i := 0; i < ng; i++ {
		scoresKVHalfGo(q[i*d:(i+1)*d], k, d, n, out[i*ldo:i*ldo+n])
	}
}

// accumKVHalfGroupGo is the plain-Go meaning of kvAccumF16G64:
// acc[i·lda:i·lda+d] += Σ_c w[i·ldw+c]·v[c·d:(c+1)·d] for i < ng, c < n.
func accumKVHalfGroupGo(acc []float32, lda, ng int, w []float32, ldw int, v []uint16, d, n int) {
	for i := 0; i < ng; i++ {
		accumKVHalfGo(acc[i*lda:i*lda+d], w[i*ldw:i*ldw+n], v, d, n)
	}
}
