package tokenizer

// encodeBPE appends the byte-level BPE tokens of text: pre-tokenize, map
// each pre-token's bytes to printable characters, merge by rank.
func (t *Tokenizer) encodeBPE(text string, out []int32) []int32 {
	for _, word := range pretokenize(text, t.pre) {
		w := mapBytes(word)
		if t.wholeTok {
			if id, ok := t.ids[w]; ok {
				out = append(out, id)
				continue
			}
		}
		syms := mergeWord(w, t.bpeRank)
		for _, s := range syms {
			piece := w[s.start:s.end]
			if id, ok := t.ids[piece]; ok {
				out = append(out, id)
				continue
			}
			// A merge result outside the vocabulary: fall back to the
			// single-byte tokens every byte-level vocabulary has.
			for _, r := range piece {
				if id, ok := t.ids[string(r)]; ok {
					out = append(out, id)
				} else if t.v.UNK >= 0 {
					out = append(out, t.v.UNK)
				}
			}
		}
	}
	return out
}

// bpeRank is the merge rank of the adjacent symbols l and r, if a merge
// joins them.
func (t *Tokenizer) bpeRank(_, l, r string) (float64, bool) {
	li, lok := t.ids[l]
	ri, rok := t.ids[r]
	if lok && rok {
		if rank, ok := t.ranks[idPair(li, ri)]; ok {
			return float64(rank), true
		}
	}
	if t.textRanks != nil {
		rank, ok := t.textRanks[pair{l, r}]
		return float64(rank), ok
	}
	return 0, false
}
