package tokenizer

// spaceMarker is SentencePiece's visible space, U+2581 "▁".
const spaceMarker = "\u2581"

// encodeSPM appends the tokens of text (spaces already replaced by ▁):
// characters merge pairwise, the pair whose union is the highest-scoring
// token first; a final symbol that is not a token falls back to its bytes
// (<0xXX> tokens), or UNK when the vocabulary has no byte tokens.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	syms := mergeWord(text, func(merged, _, _ string) (float64, bool) {
		id, ok := t.ids[merged]
		if !ok {
			return 0, false
		}
		var score float32
		if t.v.Scores != nil {
			score = t.v.Scores[id]
		}
		return -float64(score), true
	})
	for _, s := range syms {
		piece := text[s.start:s.end]
		if id, ok := t.ids[piece]; ok {
			out = append(out, id)
			continue
		}
		for i := 0; i < len(piece); i++ {
			if id := t.byteTok[piece[i]]; id >= 0 {
				out = append(out, id)
			} else if t.v.UNK >= 0 {
				out = append(out, t.v.UNK)
			}
		}
	}
	return out
}
