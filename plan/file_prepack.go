package plan

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/weftrt/weft/ir"
)

// Prepacked constants (format version 2): a backend may store, beside the
// plain weights, copies of constants already rearranged for its kernels
// (the CPU backend's SGEMM panels), so that opening the plan uses them from
// the file mapping instead of packing again. Two optional sections hold
// them: an index (kind 6, small, checked and decoded at open) and the data
// (kind 7, 64-byte aligned blobs, read only when used, checked by
// VerifyWeights). docs/plan-format.md describes the encoding.

// Prepacked is one constant as a backend's kernels want it.
type Prepacked struct {
	// Device is the device whose backend made the blob ("cpu").
	Device string
	// Value is the constant (a value with Const set in the plan's graph).
	Value *ir.Value
	// Desc is the backend's packing descriptor: everything the blob's
	// layout depends on (ISA level, panel parameters, shapes), so that a
	// backend can tell whether it may use the blob as it is.
	Desc string
	// Data is the blob; in an opened file, a read-only slice of the mapping
	// at a 64-byte aligned address.
	Data []byte
	// CRC is the CRC-32C of Data as stored in the file (set by Decode;
	// ignored by the writer, which computes it).
	CRC uint32
}

// prepackEntryMin is the fewest bytes an index entry takes.
const prepackEntryMin = 9

// encodePrepacked sorts the blobs (device, value, descriptor), lays them out
// in the data section and encodes the index. It returns the index, the
// blobs at their offsets and the data section's length.
func (t *tables) encodePrepacked(packed []Prepacked) ([]byte, blobList, int64, error) {
	type rec struct {
		pk  *Prepacked
		val int
	}
	recs := make([]rec, 0, len(packed))
	for i := range packed {
		pk := &packed[i]
		vi, err := t.value(pk.Value, "prepacked blob "+pk.Desc)
		if err != nil {
			return nil, nil, 0, err
		}
		switch {
		case pk.Value.Const == nil:
			return nil, nil, 0, fmt.Errorf("prepacked blob %q: value %v is not a constant", pk.Desc, pk.Value)
		case pk.Device == "":
			return nil, nil, 0, fmt.Errorf("prepacked blob %q of %v: no device", pk.Desc, pk.Value)
		case len(pk.Data) == 0:
			return nil, nil, 0, fmt.Errorf("prepacked blob %q of %v: no data", pk.Desc, pk.Value)
		}
		recs = append(recs, rec{pk, vi})
	}
	order := func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.pk.Device, b.pk.Device), cmp.Compare(a.val, b.val), cmp.Compare(a.pk.Desc, b.pk.Desc))
	}
	slices.SortFunc(recs, order)
	e := &encoder{}
	e.n(len(recs))
	var bl blobList
	var n int64
	for i, r := range recs {
		if i > 0 && order(recs[i-1], r) == 0 {
			return nil, nil, 0, fmt.Errorf("prepacked blob %q of %v for %s given twice", r.pk.Desc, r.pk.Value, r.pk.Device)
		}
		off := align(n)
		n = off + int64(len(r.pk.Data))
		bl = append(bl, blob{off, r.pk.Data})
		e.str(r.pk.Device)
		e.n(r.val)
		e.str(r.pk.Desc)
		e.uv(uint64(off))
		e.uv(uint64(len(r.pk.Data)))
		e.b = binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(r.pk.Data, castagnoli))
	}
	return e.b, bl, n, nil
}

// decodePrepacked decodes the index against the data section and the value
// table. Entries must be in the writer's order, each at most once.
func decodePrepacked(index, data []byte, vals []*ir.Value) ([]Prepacked, error) {
	d := &decoder{b: index}
	n := d.count("prepacked blob", prepackEntryMin)
	out := make([]Prepacked, 0, n)
	prev := -1
	for k := 0; k < n && d.err == nil; k++ {
		dev := d.str()
		vi := d.index("value", len(vals))
		desc := d.str()
		off, length := d.uv(), d.uv()
		var sum uint32
		if d.err == nil && d.left() < 4 {
			d.fail("unexpected end of section")
		}
		if d.err != nil {
			break
		}
		sum = binary.LittleEndian.Uint32(d.b[d.off:])
		d.off += 4
		v := vals[vi]
		switch {
		case v.Const == nil:
			d.fail("blob %d: value %v is not a constant", k, v)
		case dev == "":
			d.fail("blob %d (%v): no device", k, v)
		case length == 0 || off%weightAlign != 0 || off > uint64(len(data)) || length > uint64(len(data))-off:
			d.fail("blob %d (%v, %q): data [%d, +%d) out of range of the prepacked data section (%d bytes) or not %d-byte aligned",
				k, v, desc, off, length, len(data), weightAlign)
		case k > 0:
			p := out[k-1]
			if c := cmp.Or(cmp.Compare(p.Device, dev), cmp.Compare(prev, vi), cmp.Compare(p.Desc, desc)); c >= 0 {
				d.fail("blob %d (%v, %q) out of order or repeated", k, v, desc)
			}
		}
		if d.err != nil {
			break
		}
		prev = vi
		out = append(out, Prepacked{Device: dev, Value: v, Desc: desc, Data: data[off : off+length : off+length], CRC: sum})
	}
	d.done()
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}
