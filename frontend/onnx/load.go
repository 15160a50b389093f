package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/weftrt/weft/internal/mmapfile"
	"github.com/weftrt/weft/ir"
)

// Model is an imported ONNX model. Its constant tensors may alias the mapped
// model file and external data files, so they stay valid only until Close.
type Model struct {
	Graph     *ir.Graph // top-level graph; Graph.Opsets and Graph.Meta are filled
	Path      string
	IRVersion int64
	Producer  string

	data   []byte // the mapped model file (Load) or the caller's bytes (Parse)
	unmaps []func() error
	ext    *extFiles
}

// Load maps the model file read-only and imports it. Weights stored in
// raw_data or external data are not copied: the returned model's constant
// tensors point into the mappings until Close.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	data, unmap, err := mmapfile.Map(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	m, err := parse(data, filepath.Dir(path), path)
	if err != nil {
		unmap()
		return nil, err
	}
	m.unmaps = append(m.unmaps, unmap)
	m.data = data
	return m, nil
}

// memoryName stands for the file name in errors about models from Parse.
const memoryName = "<memory>"

// Parse imports a model from bytes (which its tensors may alias). dir is the
// directory that external data locations are relative to; with dir == ""
// a model with external data is an error. The model's Path is empty.
func Parse(data []byte, dir string) (*Model, error) {
	return parse(data, dir, memoryName)
}

// Close releases the mappings of the model file and its external data files.
// The model's constant tensors must not be used afterwards.
func (m *Model) Close() error {
	var errs []error
	for _, u := range m.unmaps {
		errs = append(errs, u())
	}
	m.unmaps = nil
	m.data = nil
	if m.ext != nil {
		errs = append(errs, m.ext.close())
		m.ext = nil
	}
	return errors.Join(errs...)
}

func parse(data []byte, dir, file string) (m *Model, err error) {
	m = &Model{}
	if file != memoryName {
		m.Path = file
	}
	var ext *extFiles
	if dir != "" {
		ext = &extFiles{dir: dir, files: map[string][]byte{}}
	}
	defer func() {
		if err != nil && ext != nil {
			ext.close()
		}
	}()
	mp, err := decodeModel(data)
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", file, err)
	}
	m.IRVersion = mp.irVersion
	m.Producer = mp.producer
	im := &importer{file: file, opsets: map[string]int64{}}
	if ext != nil {
		im.ext = ext
	}
	if err := im.setOpsets(mp.opsets); err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", file, err)
	}
	if mp.graph == nil {
		return nil, fmt.Errorf("onnx: %s: model has no graph", file)
	}
	name := mp.graph.name
	if name == "" {
		name = "main"
	}
	g := ir.NewGraph(name)
	g.Opsets = im.opsets
	g.Meta = map[string]string{}
	for _, e := range mp.meta {
		g.Meta[e.key] = e.value
	}
	setMeta := func(k, v string) {
		if v != "" {
			g.Meta[k] = v
		}
	}
	setMeta("producer_name", mp.producer)
	setMeta("producer_version", mp.producerVersion)
	setMeta("domain", mp.domain)
	setMeta("doc_string", mp.doc)
	if mp.modelVersion != 0 {
		g.Meta["model_version"] = strconv.FormatInt(mp.modelVersion, 10)
	}
	g.Meta["ir_version"] = strconv.FormatInt(mp.irVersion, 10)
	if err := im.buildGraph(mp.graph, g, nil); err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", file, err)
	}
	if err := ir.Verify(g); err != nil {
		return nil, fmt.Errorf("onnx: %s: imported graph does not verify: %w", file, err)
	}
	m.Graph = g
	m.ext = ext
	m.data = data
	return m, nil
}

// extFiles maps external data files on first use, one mapping per file.
type extFiles struct {
	dir    string
	root   *os.Root
	files  map[string][]byte
	unmaps []func() error
}

func (e *extFiles) external(loc string, off, length int64, hasLen bool) ([]byte, error) {
	// Locations are relative paths below the model directory; anything that
	// could leave it (absolute, "..", symlinks out) is refused.
	if !filepath.IsLocal(filepath.FromSlash(loc)) {
		return nil, fmt.Errorf("external data location %q escapes the model directory", loc)
	}
	data, ok := e.files[loc]
	if !ok {
		if e.root == nil {
			r, err := os.OpenRoot(e.dir)
			if err != nil {
				return nil, fmt.Errorf("external data: %w", err)
			}
			e.root = r
		}
		f, err := e.root.Open(filepath.FromSlash(loc))
		if err != nil {
			return nil, fmt.Errorf("external data: %w", err)
		}
		d, unmap, err := mmapfile.Map(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("external data %q: %w", loc, err)
		}
		e.files[loc] = d
		e.unmaps = append(e.unmaps, unmap)
		data = d
	}
	size := int64(len(data))
	if off > size {
		return nil, fmt.Errorf("external data %q: offset %d beyond the file's %d bytes", loc, off, size)
	}
	if !hasLen {
		length = size - off
	}
	if length > size-off {
		return nil, fmt.Errorf("external data %q: offset %d + length %d beyond the file's %d bytes", loc, off, length, size)
	}
	return data[off : off+length], nil
}

func (e *extFiles) close() error {
	var errs []error
	for _, u := range e.unmaps {
		errs = append(errs, u())
	}
	e.unmaps = nil
	e.files = map[string][]byte{}
	if e.root != nil {
		errs = append(errs, e.root.Close())
		e.root = nil
	}
	return errors.Join(errs...)
}
