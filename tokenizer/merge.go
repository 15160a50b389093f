package tokenizer

import "container/heap"

// symbol is a piece of a word being merged: the bytes word[start:end],
// linked to its live neighbours. A symbol merged into its left neighbour
// gets end == start.
type symbol struct {
	start, end int
	prev, next int
}

// bigram is a candidate merge of two adjacent symbols; lower prio merges
// first, and the leftmost wins a tie.
type bigram struct {
	left, right int
	prio        float64
	size        int // the merged length when the candidate was made
}

type bigramQueue []bigram

func (q bigramQueue) Len() int { return len(q) }
func (q bigramQueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio < q[j].prio
	}
	return q[i].left < q[j].left
}
func (q bigramQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bigramQueue) Push(x any)   { *q = append(*q, x.(bigram)) }
func (q *bigramQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// mergeWord splits word into UTF-8 characters (a malformed byte is a
// character of its own) and merges adjacent symbols while prio(merged, left, right)
// offers a merge, best first. It returns the symbols in order.
//
// This is the greedy BPE loop of SentencePiece and GPT-2 alike: the two
// differ only in how a pair is ranked (token score vs. merge rank).
func mergeWord(word string, prio func(merged, left, right string) (float64, bool)) []symbol {
	syms := make([]symbol, 0, len(word))
	for off := 0; off < len(word); {
		n := charLen(word[off])
		n = min(n, len(word)-off)
		syms = append(syms, symbol{start: off, end: off + n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	if len(syms) == 0 {
		return nil
	}
	syms[len(syms)-1].next = -1
	var q bigramQueue
	try := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		a, b := syms[l], syms[r]
		if p, ok := prio(word[a.start:b.end], word[a.start:a.end], word[b.start:b.end]); ok {
			heap.Push(&q, bigram{left: l, right: r, prio: p, size: b.end - a.start})
		}
	}
	for i := 1; i < len(syms); i++ {
		try(i-1, i)
	}
	for q.Len() > 0 {
		bg := heap.Pop(&q).(bigram)
		l, r := &syms[bg.left], &syms[bg.right]
		// Skip a candidate outdated by an earlier merge: either side was
		// consumed or grew (a symbol only ever grows to the right).
		if l.end == l.start || r.end == r.start || r.end-l.start != bg.size || l.next != bg.right {
			continue
		}
		l.end = r.end
		r.end = r.start
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		try(l.prev, bg.left)
		try(bg.left, l.next)
	}
	out := syms[:0]
	for _, s := range syms {
		if s.end > s.start {
			out = append(out, s)
		}
	}
	return out
}

// charLen is the length of the UTF-8 sequence a lead byte announces (1 for
// a continuation or invalid byte), as llama.cpp's unicode_len_utf8.
func charLen(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b>>5 == 0x6:
		return 2
	case b>>4 == 0xE:
		return 3
	case b>>3 == 0x1E:
		return 4
	}
	return 1
}
