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
	// FormatVersion is the only format version this package reads and
	// writes. Any change to the layout or to a section's encoding bumps it.
	FormatVersion = 1
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
)

var sectionNames = map[uint32]string{
	SectionMeta: "metadata", SectionGraph: "graph", SectionSchedule: "schedule",
	SectionMemory: "memory", SectionWeights: "weights",
}

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
	t, small, err := encodeSmall(p, meta)
	if err != nil {
		return fmt.Errorf("plan: Write: %w", err)
	}
	kinds := []uint32{SectionMeta, SectionGraph, SectionSchedule, SectionMemory, SectionWeights}

	blobs := t.blobs()
	table := make([]byte, entrySize*len(kinds))
	off := align(int64(headerSize + len(table)))
	for i, kind := range kinds {
		ent := table[i*entrySize:]
		var n int64
		var sum uint32
		if kind == SectionWeights {
			n, sum = t.weightsLen, blobs.crc()
		} else {
			n, sum = int64(len(small[i])), crc32.Checksum(small[i], castagnoli)
		}
		binary.LittleEndian.PutUint32(ent[0:], kind)
		binary.LittleEndian.PutUint64(ent[8:], uint64(off))
		binary.LittleEndian.PutUint64(ent[16:], uint64(n))
		binary.LittleEndian.PutUint32(ent[24:], sum)
		off = align(off + n)
	}
	// The weights come last; the file ends with their last byte.
	ws := int64(binary.LittleEndian.Uint64(table[(len(kinds)-1)*entrySize+8:]))
	size := ws + t.weightsLen
	hdr := make([]byte, headerSize)
	copy(hdr, Magic)
	binary.LittleEndian.PutUint16(hdr[6:], FormatVersion)
	binary.LittleEndian.PutUint32(hdr[8:], byteOrderMark)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(len(kinds)))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(size))
	binary.LittleEndian.PutUint32(hdr[24:], headerCRC(hdr, table))

	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	cw.write(hdr)
	cw.write(table)
	for i, sec := range small {
		cw.padTo(int64(binary.LittleEndian.Uint64(table[i*entrySize+8:])))
		cw.write(sec)
	}
	for _, b := range blobs {
		cw.padTo(ws + b.off)
		cw.write(b.data)
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
	f, err := os.CreateTemp(filepath.Dir(path), ".wplan-*")
	if err != nil {
		return fmt.Errorf("plan: writing %s: %w", path, err)
	}
	tmp := f.Name()
	err = Write(f, p, meta)
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

	weights    []byte
	weightsCRC uint32
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
	if v := le.Uint16(data[6:]); v != FormatVersion {
		return nil, formatErr(name, "", "plan format version %d; this weft reads version %d only (recompile the model with this weft)", v, FormatVersion)
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
		if _, known := sectionNames[kind]; !known {
			return nil, formatErr(name, "", "unknown section kind %d (format version %d defines kinds 1..5)", kind, FormatVersion)
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
		if kind != SectionWeights {
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
	return secs, nil
}

// VerifyWeights checks the weights section against its stored CRC-32C.
// This reads every weight page (Open deliberately does not), so it costs
// about as much as reading the file.
func (f *File) VerifyWeights() error {
	if got := crc32.Checksum(f.weights, castagnoli); got != f.weightsCRC {
		return formatErr(f.Path, "weights", "checksum mismatch (stored %#08x, computed %#08x): the file is corrupted", f.weightsCRC, got)
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
	f.unmap, f.weights = nil, nil
	return u()
}
