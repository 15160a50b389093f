package cpu

import (
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"unsafe"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// Prepacked weights (backends.Prepacker): the SGEMM panels that
// sharedPackB makes for constant weights are written into the plan file,
// and a plan opened later hands them back, so that compiling its
// partitions uses the panels in the file mapping instead of packing again
// on the heap.
//
// Export compiles the partition with a recorder on sharedPackB and keeps
// the packings whose source is one of the plan's constants. Import
// registers the offered blobs by the address of their constant's data (a
// slice of the plan's mapping, unique while the plan is open); sharedPackB
// then takes a blob whose descriptor is exactly the one it would pack
// with now, and packs again otherwise (another ISA level or blocking).
//
// Environment: WEFT_PREPACK=0 turns the feature off (no blobs exported,
// offered blobs ignored); WEFT_DEBUG containing "prepack" prints a line to
// standard error for each blob that does not fit.

var _ backends.Prepacker = device{}

// prepackFormat versions the descriptor; bump it when the panel layout
// changes in a way the other fields do not capture.
const prepackFormat = "cpu.sgemm.b/1"

// prepackDesc is the descriptor of the packing of a constant used as
// the K×N matrix B (ld its leading dimension; trans: stored N×K).
func prepackDesc(l kernels.PackLayout, ld int, trans bool) string {
	t := 0
	if trans {
		t = 1
	}
	return fmt.Sprintf("%s %v ld=%d trans=%d", prepackFormat, l, ld, t)
}

func prepackOff() bool { return os.Getenv("WEFT_PREPACK") == "0" }

func prepackDebugf(format string, args ...any) {
	if strings.Contains(os.Getenv("WEFT_DEBUG"), "prepack") {
		fmt.Fprintf(os.Stderr, "weft: cpu: prepack: "+format+"\n", args...)
	}
}

// srcKey identifies a constant's float32 data by address and length.
type srcKey struct {
	p uintptr
	n int
}

func keyOf(b []float32) srcKey { return srcKey{uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b)} }

// packRecord is one sharedPackB call seen by a recorder.
type packRecord struct {
	src    []float32
	ld     int
	trans  bool
	packed *kernels.PackedB
}

// offered is one blob offered by OfferPrepacked.
type offered struct {
	set   *offerSet
	value *ir.Value
	desc  string
	data  []byte
}

// offerSet is what one OfferPrepacked call registered, with its tallies.
type offerSet struct {
	keys           []srcKey
	used, repacked int
	reasons        []string
}

// Guarded by packMu (fast_packcache.go): the active recorders and the
// offered blobs by source.
var (
	recorders []*[]packRecord
	offers    = map[srcKey][]*offered{}
)

// recordPack tells the active recorders about a packing. Called with packMu held.
func recordPack(b []float32, ld int, trans bool, p *kernels.PackedB) {
	for _, r := range recorders {
		*r = append(*r, packRecord{b, ld, trans, p})
	}
}

// fromOffer returns the offered panels for b packed as asked, or nil (and
// notes why) when there are none that fit. Called with packMu held.
func fromOffer(b []float32, ld, K, N int, trans bool) *kernels.PackedB {
	cands := offers[keyOf(b)]
	if len(cands) == 0 {
		return nil
	}
	l := kernels.CurrentPackLayout(K, N)
	want := prepackDesc(l, ld, trans)
	for _, o := range cands {
		if o.desc != want {
			continue
		}
		if len(o.data) != 4*l.Len() || uintptr(unsafe.Pointer(unsafe.SliceData(o.data)))%4 != 0 {
			o.set.note("%v: %d bytes at %p for %q, want %d 4-byte aligned bytes", o.value, len(o.data), unsafe.SliceData(o.data), want, 4*l.Len())
			return nil
		}
		panels := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(o.data))), l.Len())
		p, err := kernels.UsePackedB(panels, l)
		if err != nil {
			o.set.note("%v: %v", o.value, err)
			return nil
		}
		o.set.used++
		return p
	}
	descs := make([]string, len(cands))
	for i, o := range cands {
		descs[i] = fmt.Sprintf("%q", o.desc)
	}
	cands[0].set.note("%v: stored %s, need %q", cands[0].value, strings.Join(descs, ", "), want)
	return nil
}

func (s *offerSet) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.reasons = append(s.reasons, msg)
	s.repacked++
	prepackDebugf("packing again: %s", msg)
}

// ExportPrepacked implements backends.Prepacker: it compiles part and
// returns the SGEMM panels its kernels packed from p's constants.
func (d device) ExportPrepacked(p *plan.Plan, part *plan.Partition) ([]plan.Prepacked, error) {
	if prepackOff() || part.Device != DeviceName {
		return nil, nil
	}
	var recs []packRecord
	packMu.Lock()
	recorders = append(recorders, &recs)
	packMu.Unlock()
	_, err := d.CompilePlanned(p, part)
	packMu.Lock()
	for i, r := range recorders {
		if r == &recs {
			recorders = append(recorders[:i], recorders[i+1:]...)
			break
		}
	}
	packMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cpu: prepacking partition %d: %w", part.Index, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	consts := constsBySource(p.Graph)
	var byHash map[uint32][]*ir.Value // built on first need
	var out []plan.Prepacked
	seen := map[string]bool{}
	for _, r := range recs {
		v := consts[keyOf(r.src)]
		if v == nil {
			// The kernel read a copy (a constant at an address not aligned
			// for float32): find the constant by contents.
			if byHash == nil {
				byHash = constsByHash(p.Graph)
			}
			v = findByContents(byHash, r.src)
		}
		if v == nil {
			continue
		}
		desc := prepackDesc(r.packed.Layout(), r.ld, r.trans)
		key := fmt.Sprintf("%d %s", v.ID, desc)
		if seen[key] {
			continue
		}
		seen[key] = true
		panels := r.packed.Panels()
		data := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(panels))), 4*len(panels))
		out = append(out, plan.Prepacked{Device: DeviceName, Value: v, Desc: desc, Data: data})
	}
	return out, nil
}

// eachConst calls f for the float32 constants of g and its subgraphs.
func eachConst(g *ir.Graph, f func(v *ir.Value)) {
	for _, v := range g.Consts {
		if v.Const != nil && v.Const.DType == ir.Float32 && len(v.Const.Data) > 0 {
			f(v)
		}
	}
	for _, n := range g.Nodes {
		for _, sg := range n.Subgraphs() {
			eachConst(sg, f)
		}
	}
}

func constsBySource(g *ir.Graph) map[srcKey]*ir.Value {
	m := map[srcKey]*ir.Value{}
	eachConst(g, func(v *ir.Value) {
		k := srcKey{uintptr(unsafe.Pointer(unsafe.SliceData(v.Const.Data))), len(v.Const.Data) / 4}
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	})
	return m
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func constsByHash(g *ir.Graph) map[uint32][]*ir.Value {
	m := map[uint32][]*ir.Value{}
	eachConst(g, func(v *ir.Value) {
		h := crc32.Checksum(v.Const.Data, castagnoli)
		m[h] = append(m[h], v)
	})
	return m
}

func findByContents(byHash map[uint32][]*ir.Value, src []float32) *ir.Value {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), 4*len(src))
	for _, v := range byHash[crc32.Checksum(b, castagnoli)] {
		if string(v.Const.Data) == string(b) {
			return v
		}
	}
	return nil
}

// OfferPrepacked implements backends.Prepacker.
func (device) OfferPrepacked(p *plan.Plan, blobs []plan.Prepacked) (done func() string) {
	s := &offerSet{}
	if prepackOff() {
		return func() string { return fmt.Sprintf("cpu: %d prepacked weights ignored (WEFT_PREPACK=0)", len(blobs)) }
	}
	packMu.Lock()
	for _, b := range blobs {
		if b.Device != DeviceName || b.Value == nil || b.Value.Const == nil || b.Value.Const.DType != ir.Float32 {
			continue
		}
		c := b.Value.Const
		k := srcKey{uintptr(unsafe.Pointer(unsafe.SliceData(c.Data))), len(c.Data) / 4}
		offers[k] = append(offers[k], &offered{set: s, value: b.Value, desc: b.Desc, data: b.Data})
		s.keys = append(s.keys, k)
	}
	packMu.Unlock()
	return func() string {
		packMu.Lock()
		defer packMu.Unlock()
		for _, k := range s.keys {
			list := offers[k]
			kept := list[:0]
			for _, o := range list {
				if o.set != s {
					kept = append(kept, o)
				}
			}
			if len(kept) == 0 {
				delete(offers, k)
			} else {
				offers[k] = kept
			}
		}
		s.keys = nil
		msg := fmt.Sprintf("cpu: %d of %d prepacked weights used from the plan file, %d packed again", s.used, len(blobs), s.repacked)
		if len(s.reasons) > 0 {
			msg += " (" + s.reasons[0]
			if len(s.reasons) > 1 {
				msg += fmt.Sprintf(", and %d more", len(s.reasons)-1)
			}
			msg += ")"
		}
		return msg
	}
}
