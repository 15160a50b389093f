package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/weftrt/weft/frontend/gguf"
)

// isGGUF reports whether the file at path starts with the GGUF magic.
func isGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	return string(magic[:]) == gguf.Magic
}

// ggufArrayShown is how many elements of a metadata array inspect prints.
const ggufArrayShown = 6

// inspectGGUF prints a GGUF file's version, metadata (long arrays
// summarized), tensor table and totals.
func inspectGGUF(w io.Writer, path string) error {
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	describeGGUF(w, f)
	return nil
}

func describeGGUF(w io.Writer, f *gguf.File) {
	fmt.Fprintf(w, "file       %s\n", f.Path)
	fmt.Fprintf(w, "format     GGUF v%d, alignment %d, tensor data at offset %d\n", f.Version, f.Alignment, f.DataOffset)
	if a := f.Architecture(); a != "" {
		fmt.Fprintf(w, "arch       %s\n", a)
	}
	fmt.Fprintf(w, "metadata   %d keys\n", len(f.Metadata))
	width := 0
	for _, kv := range f.Metadata {
		width = max(width, min(len(kv.Key), 48))
	}
	for _, kv := range f.Metadata {
		typ := kv.Value.Type.String()
		if a, ok := kv.Value.V.(gguf.Array); ok {
			typ = fmt.Sprintf("%v[%d]", a.Elem, a.Len())
		}
		fmt.Fprintf(w, "  %-*s  %-14s %s\n", width, kv.Key, typ, kv.Value.Summary(ggufArrayShown))
	}
	fmt.Fprintf(w, "tensors    %d\n", len(f.Tensors))
	if len(f.Tensors) == 0 {
		return
	}
	nw := len("name")
	for _, t := range f.Tensors {
		nw = max(nw, min(len(t.Name), 48))
	}
	fmt.Fprintf(w, "  %-*s  %-22s %-8s %12s %12s\n", nw, "name", "shape", "type", "bytes", "offset")
	var elems, bytes int64
	byType := map[string]int64{}
	var types []string
	for _, t := range f.Tensors {
		n := int64(1)
		dims := make([]string, len(t.Shape))
		for i, d := range t.Shape {
			n *= d
			dims[i] = fmt.Sprint(d)
		}
		elems += n
		bytes += t.Size
		typ := t.GGMLType.String()
		if t.Type.String() != typ && t.Type.Valid() {
			typ = t.Type.String()
		}
		if _, seen := byType[typ]; !seen {
			types = append(types, typ)
		}
		byType[typ] += t.Size
		fmt.Fprintf(w, "  %-*s  %-22s %-8s %12d %12d\n", nw, t.Name, "["+strings.Join(dims, ", ")+"]", typ, t.Size, f.DataOffset+t.Offset)
	}
	fmt.Fprintf(w, "total      %d tensors, %s elements, %s\n", len(f.Tensors), groupDigits(elems), humanBytes(bytes))
	for _, typ := range types {
		fmt.Fprintf(w, "  %-8s %s\n", typ, humanBytes(byType[typ]))
	}
}
