package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/weftrt/weft/ir"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header we are willing to parse; real headers are a
// few hundred bytes, and the bound keeps a corrupt length from allocating
// gigabytes.
const maxHeaderLen = 1 << 20

// maxDataBytes bounds the data size a header may declare (1 TiB), so that
// shape products cannot overflow the size arithmetic.
const maxDataBytes = 1 << 40

// descrs maps weft dtypes to the NumPy descr that Write emits.
var descrs = map[ir.DType]string{
	ir.Float32: "<f4",
	ir.Float64: "<f8",
	ir.Float16: "<f2",
	ir.Int8:    "|i1",
	ir.Int16:   "<i2",
	ir.Int32:   "<i4",
	ir.Int64:   "<i8",
	ir.Uint8:   "|u1",
	ir.Uint16:  "<u2",
	ir.Uint32:  "<u4",
	ir.Uint64:  "<u8",
	ir.Bool:    "|b1",
}

// kinds maps a descr without its byte-order character to a weft dtype.
var kinds = map[string]ir.DType{
	"f2": ir.Float16, "e": ir.Float16,
	"f4": ir.Float32, "f": ir.Float32,
	"f8": ir.Float64, "d": ir.Float64,
	"i1": ir.Int8, "b": ir.Int8,
	"i2": ir.Int16, "h": ir.Int16,
	"i4": ir.Int32, "i": ir.Int32,
	"i8": ir.Int64, "q": ir.Int64,
	"u1": ir.Uint8, "B": ir.Uint8,
	"u2": ir.Uint16, "H": ir.Uint16,
	"u4": ir.Uint32, "I": ir.Uint32,
	"u8": ir.Uint64, "Q": ir.Uint64,
	"b1": ir.Bool, "?": ir.Bool,
}

// StoredAs returns the dtype that Write stores a tensor of dtype dt as: dt
// itself, except bfloat16, which NumPy lacks and which is widened to float32.
// Callers use it to tell users about the conversion.
func StoredAs(dt ir.DType) ir.DType {
	if dt == ir.BFloat16 {
		return ir.Float32
	}
	return dt
}

// ReadFile reads the .npy file at path. Errors name the file.
func ReadFile(path string) (*ir.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	t, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Read reads one array from r. It reads exactly the header and the data the
// header declares; anything after the array is left unread.
func Read(r io.Reader) (*ir.Tensor, error) {
	t, err := read(r)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return t, nil
}

func read(r io.Reader) (*ir.Tensor, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, errors.New("empty input, not an .npy file")
		}
		return nil, fmt.Errorf("truncated preamble (%d bytes), not an .npy file", n)
	}
	if string(pre[:6]) != magic {
		return nil, fmt.Errorf("bad magic %q, not an .npy file", pre[:6])
	}
	major, minor := pre[6], pre[7]
	var hlen int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, errors.New("truncated header length")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, errors.New("truncated header length")
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n > maxHeaderLen {
			return nil, fmt.Errorf("header length %d is implausibly large", n)
		}
		hlen = int(n)
	default:
		return nil, fmt.Errorf("unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	hdr := make([]byte, hlen)
	if n, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated header: got %d of %d bytes", n, hlen)
	}
	h, err := parseHeader(string(hdr))
	if err != nil {
		return nil, fmt.Errorf("bad header %q: %w", strings.TrimRight(string(hdr), " \n"), err)
	}
	dt, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	if h.fortran {
		return nil, errors.New("fortran_order is True: only C-order arrays are supported (save with np.ascontiguousarray)")
	}
	elems := int64(1)
	for _, d := range h.shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", h.shape)
		}
		if d != 0 && elems > maxDataBytes/int64(dt.Size())/d {
			return nil, fmt.Errorf("shape %v is too large", h.shape)
		}
		elems *= d
	}
	if elems > maxDataBytes/int64(dt.Size()) {
		return nil, fmt.Errorf("shape %v is too large", h.shape)
	}
	nbytes := int(elems) * dt.Size()
	data, got, err := readData(r, nbytes)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("short data: %v%v needs %d bytes, file has %d", dt, h.shape, nbytes, got)
		}
		return nil, fmt.Errorf("reading data: %w", err)
	}
	if dt == ir.Bool {
		for i, b := range data {
			if b != 0 {
				data[i] = 1
			}
		}
	}
	return &ir.Tensor{DType: dt, Shape: h.shape, Data: data}, nil
}

// readData reads exactly n bytes into an aligned buffer. It grows the
// buffer as data arrives, so a header that declares more data than the
// stream holds costs no more memory than the stream itself.
func readData(r io.Reader, n int) ([]byte, int, error) {
	const chunk = 16 << 20
	if n <= chunk {
		buf := ir.AlignedBytes(n)
		got, err := io.ReadFull(r, buf)
		return buf, got, err
	}
	var bb bytes.Buffer
	got, err := io.CopyN(&bb, r, int64(n))
	if err != nil {
		return nil, int(got), err
	}
	buf := ir.AlignedBytes(n)
	copy(buf, bb.Bytes())
	return buf, n, nil
}

// parseDescr maps a NumPy dtype descr to a weft dtype.
func parseDescr(s string) (ir.DType, error) {
	if s == "" {
		return ir.Invalid, errors.New("empty descr")
	}
	order, kind := byte('='), s
	switch s[0] {
	case '<', '>', '|', '=':
		order, kind = s[0], s[1:]
	}
	dt, ok := kinds[kind]
	if !ok {
		return ir.Invalid, fmt.Errorf("unsupported dtype %q (weft reads f2 f4 f8 i1-i8 u1-u8 b1)", s)
	}
	if order == '>' && dt.Size() > 1 {
		return ir.Invalid, fmt.Errorf("big-endian dtype %q is not supported (convert with arr.astype(arr.dtype.newbyteorder('<')))", s)
	}
	if order == '=' && dt.Size() > 1 && !littleEndianHost() {
		return ir.Invalid, fmt.Errorf("native-order dtype %q on a big-endian host is not supported", s)
	}
	return dt, nil
}

func littleEndianHost() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}

// WriteFile writes t to path as an .npy file (see Write).
func WriteFile(path string, t *ir.Tensor) error {
	var buf bytes.Buffer
	if err := Write(&buf, t); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// Write writes t as a version 1.0 .npy array (2.0 if the header needs it).
// A bfloat16 tensor is written as float32, exactly; see StoredAs.
func Write(w io.Writer, t *ir.Tensor) error {
	if t == nil {
		return errors.New("npy: nil tensor")
	}
	if err := t.Check(); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	data := t.Data
	dt := t.DType
	if dt == ir.BFloat16 {
		data = make([]byte, t.Len()*4)
		for i := 0; i < t.Len(); i++ {
			binary.LittleEndian.PutUint32(data[i*4:], math.Float32bits(float32(t.Float64(i))))
		}
		dt = ir.Float32
	}
	descr, ok := descrs[dt]
	if !ok {
		return fmt.Errorf("npy: dtype %v has no NumPy equivalent", t.DType)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr)
	for i, d := range t.Shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatInt(d, 10))
	}
	if len(t.Shape) == 1 {
		sb.WriteString(",")
	}
	sb.WriteString("), }")
	dict := sb.String()
	// Pad with spaces and a final newline so that the data starts on a
	// 64-byte boundary, as NumPy does.
	pre := 10 // magic, version, uint16 length
	version := byte(1)
	if len(dict)+1+pre+64 > 0xffff {
		pre, version = 12, 2
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hdr := dict + strings.Repeat(" ", total-pre-len(dict)-1) + "\n"
	out := make([]byte, 0, total)
	out = append(out, magic...)
	out = append(out, version, 0)
	if version == 1 {
		out = binary.LittleEndian.AppendUint16(out, uint16(len(hdr)))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(hdr)))
	}
	out = append(out, hdr...)
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}
