package plan

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/weftrt/weft/internal/mmapfile"
	"github.com/weftrt/weft/ir"
)

// The .wplan file format; docs/plan-format.md is the full description.
const (
	// Magic opens every plan file.
	Magic = "WPLAN\x00"
	// FormatVersion is the format version this package writes. Any change
	// to the layout or to a section's encoding bumps it. It reads this
	// version and version 1 (which has no prepacked sections).
	FormatVersion = 2
	// byteOrderMark is stored little-endian; a big-endian writer would
	// produce the bytes in the other order.
	byteOrderMark = 0x0A0B0C0D
	headerSize    = 32
	entrySize     = 32
	maxSections   = 64
)

// Section kinds, in the order a writer stores them.
const (
	SectionMeta     = 1
	SectionGraph    = 2
	SectionSchedule = 3
	SectionMemory   = 4
	SectionWeights  = 5
	// SectionPrepackIndex and SectionPrepacked (version 2, optional,
	// together) hold constants prepacked by backends (file_prepack.go).
	SectionPrepackIndex = 6
	SectionPrepacked    = 7
)

var sectionNames = map[uint32]string{
	SectionMeta: "metadata", SectionGraph: "graph", SectionSchedule: "schedule",
	SectionMemory: "memory", SectionWeights: "weights",
	SectionPrepackIndex: "prepacked index", SectionPrepacked: "prepacked data",
}

// bulkSection reports whether a section holds bulk data (weights, prepacked
// blobs), which open does not read: its checksum is checked by VerifyWeights.
func bulkSection(kind uint32) bool { return kind == SectionWeights || kind == SectionPrepacked }

func sectionName(kind uint32) string {
	if s, ok := sectionNames[kind]; ok {
		return s
	}
	return fmt.Sprintf("kind-%d", kind)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FormatError reports a plan file that is not a valid plan: truncated, not
// a plan at all, of a foreign version or byte order, failing a checksum, or
// with contents that do not decode.
type FormatError struct {
	File    string // the path, or "<memory>"
	Section string // the section at fault, "" for the header
	Msg     string
}

func (e *FormatError) Error() string {
	if e.Section == "" {
		return fmt.Sprintf("plan: %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("plan: %s: %s section: %s", e.File, e.Section, e.Msg)
}

func formatErr(file, section, format string, args ...any) error {
	return &FormatError{File: file, Section: section, Msg: fmt.Sprintf(format, args...)}
}

// Write encodes p, with the metadata meta, in the .wplan format. The output
// depends only on p and meta: the same plan always gives the same bytes.
// The graph must pass ir.Verify and the memory plan Plan.Verify. Constants'
// data is stored exactly as ir.Tensor.Data holds it (little-endian;
// quantized blocks as they are), each tensor 64-byte aligned.
func Write(w io.Writer, p *Plan, meta map[string]string) error {
	return WritePrepacked(w, p, meta, nil)
}

// WritePrepacked is Write that also stores the backends' prepacked
// constants (none: the file has no prepacked sections). The blobs are
// stored in (device, value, descriptor) order, so the bytes do not depend
// on the order of packed.
func WritePrepacked(w io.Writer, p *Plan, meta map[string]string, packed []Prepacked) error {
	t, small, err := encodeSmall(p, meta)
	if err != nil {
		return fmt.Errorf("plan: Write: %w", err)
	}
	type sec struct {
		kind  uint32
		small []byte   // a small section's bytes, or
		blobs blobList // a bulk section's blobs
		n     int64
		off   int64
	}
	secs := []*sec{{kind: SectionMeta, small: small[0]}, {kind: SectionGraph, small: small[1]},
		{kind: SectionSchedule, small: small[2]}, {kind: SectionMemory, small: small[3]},
		{kind: SectionWeights, blobs: t.blobs(), n: t.weightsLen}}
	if len(packed) > 0 {
		index, bl, n, err := t.encodePrepacked(packed)
		if err != nil {
			return fmt.Errorf("plan: Write: %w", err)
		}
		secs = append(secs, &sec{kind: SectionPrepackIndex, small: index}, &sec{kind: SectionPrepacked, blobs: bl, n: n})
	}
	table := make([]byte, entrySize*len(secs))
	off := align(int64(headerSize + len(table)))
	for i, s := range secs {
		ent := table[i*entrySize:]
		var sum uint32
		if bulkSection(s.kind) {
			sum = s.blobs.crc()
		} else {
			s.n, sum = int64(len(s.small)), crc32.Checksum(s.small, castagnoli)
		}
		s.off = off
		binary.LittleEndian.PutUint32(ent[0:], s.kind)
		binary.LittleEndian.PutUint64(ent[8:], uint64(off))
		binary.LittleEndian.PutUint64(ent[16:], uint64(s.n))
		binary.LittleEndian.PutUint32(ent[24:], sum)
		off = align(off + s.n)
	}
	// The file ends with the last byte of the last section.
	last := secs[len(secs)-1]
	size := last.off + last.n
	hdr := make([]byte, headerSize)
	copy(hdr, Magic)
	binary.LittleEndian.PutUint16(hdr[6:], FormatVersion)
	binary.LittleEndian.PutUint32(hdr[8:], byteOrderMark)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(len(secs)))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(size))
	binary.LittleEndian.PutUint32(hdr[24:], headerCRC(hdr, table))

	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	cw.write(hdr)
	cw.write(table)
	for _, s := range secs {
		cw.padTo(s.off)
		cw.write(s.small)
		for _, b := range s.blobs {
			cw.padTo(s.off + b.off)
			cw.write(b.data)
		}
	}
	cw.padTo(size)
	if cw.err != nil {
		return fmt.Errorf("plan: Write: %w", cw.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("plan: Write: %w", err)
	}
	return nil
}

// encodeSmall checks p and encodes the metadata, graph, schedule and memory
// sections.
func encodeSmall(p *Plan, meta map[string]string) (*tables, [][]byte, error) {
	if p == nil || p.Graph == nil {
		return nil, nil, errors.New("no plan or no graph")
	}
	if err := ir.Verify(p.Graph); err != nil {
		return nil, nil, err
	}
	if err := p.Verify(); err != nil {
		return nil, nil, err
	}
	t, err := newTables(p.Graph)
	if err != nil {
		return nil, nil, err
	}
	graph, err := t.encodeGraph()
	if err != nil {
		return nil, nil, err
	}
	sched, err := t.encodeSchedule(p)
	if err != nil {
		return nil, nil, err
	}
	mem, err := t.encodeMemory(p)
	if err != nil {
		return nil, nil, err
	}
	return t, [][]byte{encodeMeta(meta), graph, sched, mem}, nil
}

// headerCRC is the CRC-32C of the header (with its CRC field zero) followed
// by the section table.
func headerCRC(hdr, table []byte) uint32 {
	h := make([]byte, headerSize)
	copy(h, hdr)
	binary.LittleEndian.PutUint32(h[24:], 0)
	return crc32.Update(crc32.Checksum(h, castagnoli), castagnoli, table)
}

// blob is one stored run of weight bytes at an offset in the weights section.
type blob struct {
	off  int64
	data []byte
}

type blobList []blob

// blobs lists the distinct weight byte runs in offset order.
func (t *tables) blobs() blobList {
	var bl blobList
	seen := map[int64]bool{}
	for i, x := range t.tensors {
		if len(x.Data) == 0 || seen[t.offsets[i]] {
			continue
		}
		seen[t.offsets[i]] = true
		bl = append(bl, blob{t.offsets[i], x.Data})
	}
	sort.Slice(bl, func(i, j int) bool { return bl[i].off < bl[j].off })
	return bl
}

// crc is the CRC-32C of the weights section as written: the blobs with zero
// padding between them.
func (bl blobList) crc() uint32 {
	var zeros [weightAlign]byte
	var sum uint32
	pos := int64(0)
	for _, b := range bl {
		sum = crc32.Update(sum, castagnoli, zeros[:b.off-pos])
		sum = crc32.Update(sum, castagnoli, b.data)
		pos = b.off + int64(len(b.data))
	}
	return sum
}

// countWriter writes with a sticky error and pads with zeros to offsets.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	k, err := c.w.Write(b)
	c.n += int64(k)
	c.err = err
}

func (c *countWriter) padTo(off int64) {
	var zeros [weightAlign]byte
	for c.err == nil && c.n < off {
		c.write(zeros[:min(off-c.n, weightAlign)])
	}
}

// WriteFile writes the plan to path (through a temporary file in the same
// directory, renamed into place, so that a failed write leaves no partial
// plan under the final name).
func WriteFile(path string, p *Plan, meta map[string]string) error {
	return WriteFilePrepacked(path, p, meta, nil)
}

// WriteFilePrepacked is WriteFile with the backends' prepacked constants
// (see WritePrepacked).
func WriteFilePrepacked(path string, p *Plan, meta map[string]string, packed []Prepacked) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".wplan-*")
	if err != nil {
		return fmt.Errorf("plan: writing %s: %w", path, err)
	}
	tmp := f.Name()
	err = WritePrepacked(f, p, meta, packed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("plan: %s: %w", path, err)
	}
	return nil
}

// File is an opened plan file. Its constants are zero-copy slices of the
// read-only file mapping: they stay valid until Close, and must not be
// written to.
type File struct {
	Plan *Plan
	// Meta is the metadata section (producer, weft version, options, source model).
	Meta map[string]string
	Path string
	// Size is the file size; WeightBytes the size of the weights section.
	Size        int64
	WeightBytes int64
	// Prepacked lists the constants that backends stored prepacked, in
	// (device, value, descriptor) order; their Data alias the mapping.
	// PrepackedBytes is the size of the prepacked data section.
	Prepacked      []Prepacked
	PrepackedBytes int64

	weights    []byte
	weightsCRC uint32
	packed     []byte
	packedCRC  uint32
	unmap      func() error
}

// Open maps the plan file at path read-only and decodes it. It checks the
// header, the section table and the checksums of every section except the
// weights, whose pages it does not touch (see VerifyWeights).
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	data, unmap, err := mmapfile.Map(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("plan: %s: %w", path, err)
	}
	pf, err := Decode(data, path)
	if err != nil {
		unmap()
		return nil, err
	}
	pf.unmap = unmap
	return pf, nil
}

// Decode decodes a plan held in memory; the constants of the returned plan
// alias data. name stands for the file in error messages. Like Open, it
// does not read the weights (see VerifyWeights).
func Decode(data []byte, name string) (*File, error) {
	secs, err := readHeader(data, name)
	if err != nil {
		return nil, err
	}
	pf := &File{Path: name, Size: int64(len(data))}
	ws := secs[SectionWeights]
	pf.weights, pf.weightsCRC, pf.WeightBytes = ws.data, ws.crc, int64(len(ws.data))
	if pf.Meta, err = decodeMeta(secs[SectionMeta].data); err != nil {
		return nil, formatErr(name, "metadata", "%v", err)
	}
	g, vals, err := decodeGraph(secs[SectionGraph].data, pf.weights)
	if err != nil {
		return nil, formatErr(name, "graph", "%v", err)
	}
	p := &Plan{Graph: g}
	if err := decodeSchedule(secs[SectionSchedule].data, p, vals); err != nil {
		return nil, formatErr(name, "schedule", "%v", err)
	}
	if err := decodeMemory(secs[SectionMemory].data, p, vals); err != nil {
		return nil, formatErr(name, "memory", "%v", err)
	}
	if err := p.Verify(); err != nil {
		return nil, formatErr(name, "memory", "%v", err)
	}
	if idx, ok := secs[SectionPrepackIndex]; ok {
		ps := secs[SectionPrepacked]
		pf.packed, pf.packedCRC, pf.PrepackedBytes = ps.data, ps.crc, int64(len(ps.data))
		if pf.Prepacked, err = decodePrepacked(idx.data, ps.data, vals); err != nil {
			return nil, formatErr(name, sectionName(SectionPrepackIndex), "%v", err)
		}
	}
	pf.Plan = p
	return pf, nil
}

// section is one entry of the section table, with its bytes.
type section struct {
	data []byte
	crc  uint32
}

// readHeader checks the header and the section table, and the checksums of
// every section but the weights.
func readHeader(data []byte, name string) (map[uint32]section, error) {
	if len(data) < len(Magic) || string(data[:len(Magic)]) != Magic {
		n := min(len(data), len(Magic))
		return nil, formatErr(name, "", "not a weft plan file (starts with %q, want %q)", data[:n], Magic)
	}
	if len(data) < headerSize {
		return nil, formatErr(name, "", "truncated: %d bytes, the header alone takes %d", len(data), headerSize)
	}
	le := binary.LittleEndian
	version := le.Uint16(data[6:])
	if version != FormatVersion && version != 1 {
		return nil, formatErr(name, "", "plan format version %d; this weft reads versions 1 to %d (recompile the model with this weft)", version, FormatVersion)
	}
	lastKind := uint32(SectionPrepacked)
	if version == 1 {
		lastKind = SectionWeights
	}
	switch bom := le.Uint32(data[8:]); bom {
	case byteOrderMark:
	case 0x0D0C0B0A:
		return nil, formatErr(name, "", "big-endian plan; weft plans are little-endian")
	default:
		return nil, formatErr(name, "", "bad byte-order mark %#08x", bom)
	}
	n := le.Uint32(data[12:])
	if n == 0 || n > maxSections {
		return nil, formatErr(name, "", "section count %d out of range (1..%d)", n, maxSections)
	}
	tableEnd := headerSize + int64(n)*entrySize
	if size := le.Uint64(data[16:]); size != uint64(len(data)) {
		if size > uint64(len(data)) {
			return nil, formatErr(name, "", "truncated: %d bytes, the header says %d", len(data), size)
		}
		return nil, formatErr(name, "", "%d bytes, the header says %d (trailing data)", len(data), size)
	}
	if tableEnd > int64(len(data)) {
		return nil, formatErr(name, "", "truncated: the section table needs %d bytes, the file has %d", tableEnd, len(data))
	}
	table := data[headerSize:tableEnd]
	if got, want := headerCRC(data[:headerSize], table), le.Uint32(data[24:]); got != want {
		return nil, formatErr(name, "", "header checksum mismatch (stored %#08x, computed %#08x): the file is corrupted", want, got)
	}
	secs := map[uint32]section{}
	for i := 0; i < int(n); i++ {
		ent := table[i*entrySize:]
		kind, off, length, sum := le.Uint32(ent), le.Uint64(ent[8:]), le.Uint64(ent[16:]), le.Uint32(ent[24:])
		sname := sectionName(kind)
		if kind < SectionMeta || kind > lastKind {
			return nil, formatErr(name, "", "unknown section kind %d (format version %d defines kinds 1..%d)", kind, version, lastKind)
		}
		if _, dup := secs[kind]; dup {
			return nil, formatErr(name, sname, "appears twice in the section table")
		}
		if off < uint64(tableEnd) || off > uint64(len(data)) || length > uint64(len(data))-off {
			return nil, formatErr(name, sname, "bytes [%d, +%d) lie outside the file (%d bytes) or overlap the header", off, length, len(data))
		}
		if off%weightAlign != 0 {
			return nil, formatErr(name, sname, "offset %d is not %d-byte aligned", off, weightAlign)
		}
		s := section{data: data[off : off+length : off+length], crc: sum}
		if !bulkSection(kind) {
			if got := crc32.Checksum(s.data, castagnoli); got != sum {
				return nil, formatErr(name, sname, "checksum mismatch (stored %#08x, computed %#08x): the file is corrupted", sum, got)
			}
		}
		secs[kind] = s
	}
	for kind := uint32(SectionMeta); kind <= SectionWeights; kind++ {
		if _, ok := secs[kind]; !ok {
			return nil, formatErr(name, sectionName(kind), "missing")
		}
	}
	_, hasIndex := secs[SectionPrepackIndex]
	if _, hasData := secs[SectionPrepacked]; hasIndex != hasData {
		kind := uint32(SectionPrepacked)
		if hasData {
			kind = SectionPrepackIndex
		}
		return nil, formatErr(name, sectionName(kind), "missing (the prepacked index and data sections come together)")
	}
	return secs, nil
}

// VerifyWeights checks the weights section, and the prepacked data section
// if there is one, against their stored CRC-32Cs. This reads every weight
// page (Open deliberately does not), so it costs about as much as reading
// the file.
func (f *File) VerifyWeights() error {
	if got := crc32.Checksum(f.weights, castagnoli); got != f.weightsCRC {
		return formatErr(f.Path, "weights", "checksum mismatch (stored %#08x, computed %#08x): the file is corrupted", f.weightsCRC, got)
	}
	// Without the section both are zero.
	if got := crc32.Checksum(f.packed, castagnoli); got != f.packedCRC {
		return formatErr(f.Path, sectionName(SectionPrepacked), "checksum mismatch (stored %#08x, computed %#08x): the file is corrupted", f.packedCRC, got)
	}
	return nil
}

// Close releases the file mapping. The plan's constants must not be used
// afterwards.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	u := f.unmap
	f.unmap, f.weights, f.packed = nil, nil, nil
	return u()
}
