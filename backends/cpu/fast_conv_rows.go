package cpu

import "github.com/weftrt/weft/backends/cpu/kernels"

// Row mode of the implicit-GEMM convolution. Where the buffer's rows are
// wider than the output's (Wq > OW: a strided conv with padding, like
// ResNet's 7×7 stem), the column-chunk path computes Wq columns per output
// row into a per-worker tile and then compacts the OW valid ones into Y
// (kernels.ConvCompactRow), a second pass over the whole output. In row
// mode a task is a band of whole output rows instead, and each output row
// is one ConvGemm of exactly OW columns read at the row's virtual column
// oh·Wq and stored straight into Y with the epilogue fused: no tile, no
// copy. A last panel of at most 16 columns runs the half-width kernels, so
// row mode is chosen where rounding OW up to 16 costs no more columns than
// Wq does.

// convRowMode enables row mode (a variable so that benchmarks can compare
// it with the column-chunk path).
var convRowMode = true

// planRows switches p to row mode where it pays (see above); call after
// split, on the GEMM path (not the transposed or depthwise kernels).
func (p *implicitConv) planRows(workers int) {
	if !convRowMode || !p.temp || roundUpInt(p.OW, 16) > p.Wq || p.nr != 32 || !kernels.ConvHalfPanels() {
		return
	}
	// About as many columns per task as the column chunks have, and at
	// least 4 tasks per worker where the shape allows.
	rows := max(1, p.nc/p.Wq)
	if workers > 1 {
		rows = max(1, min(rows, p.OH*p.G*p.mBlocks/(4*workers)))
	}
	p.rowsPer = rows
	p.nChunks = (p.OH + rows - 1) / rows
	p.temp = false
}

// rowTask runs task t in row mode: row block t/nChunks (within its group)
// over output rows [ch·rowsPer, (ch+1)·rowsPer).
func (j *implicitJob) rowTask(wk, t int) {
	p := j.p
	per := p.mBlocks * p.nChunks
	g, t := t/per, t%per
	mb, ch := t/p.nChunks, t%p.nChunks
	i0, i1 := p.rows(mb)
	oh0, oh1 := ch*p.rowsPer, min(p.OH, (ch+1)*p.rowsPer)
	ohw := p.OH * p.OW
	y, bias, z := j.groupOut(g)
	cw := j.cws[g]
	var epi *kernels.ConvEpi
	if p.bias || p.z || p.relu {
		epi = &j.epis[wk]
	}
	buf := j.buf[g*p.Cg*p.chanLen:]
	for oh := oh0; oh < oh1; oh++ {
		c := y[i0*ohw+oh*p.OW:]
		if epi != nil {
			*epi = kernels.ConvEpi{Bias: bias, Relu: p.relu}
			if z != nil {
				epi.Z = z[i0*ohw+oh*p.OW:]
			}
		}
		b := buf[oh*p.Wq:]
		for kb, nb := 0, cw.Blocks(); kb < nb; kb++ {
			k0, _ := cw.Block(kb)
			var e *kernels.ConvEpi
			if kb == nb-1 {
				e = epi
			}
			kernels.ConvGemm(cw, kb, i0, i1, b, p.off[k0:], p.OW, c, ohw, kb > 0, e)
		}
		if p.act != nil {
			for i := i0; i < i1; i++ {
				p.act(y[i*ohw+oh*p.OW : i*ohw+(oh+1)*p.OW])
			}
		}
	}
}
