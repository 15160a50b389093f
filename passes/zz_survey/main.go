// Temporary survey tool (deleted before hand-off).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

func main() {
	dirs, _ := filepath.Glob("/usr/share/libonnx-testdata/data/*/*")
	sort.Strings(dirs)
	var nLoad, nOK, nStatic, nPartial, nErr, nMismatch int
	for _, d := range dirs {
		m, err := onnx.Load(filepath.Join(d, "model.onnx"))
		if err != nil {
			continue
		}
		nLoad++
		g := m.Graph
		func() {
			defer func() {
				if r := recover(); r != nil {
					fmt.Printf("PANIC %s: %v\n", filepath.Base(d), r)
					nErr++
				}
			}()
			if os.Getenv("STRIP") != "" {
				g.Walk(func(sg *ir.Graph) {
					for _, n := range sg.Nodes {
						for _, o := range n.Outputs {
							o.DType, o.Shape = ir.Invalid, nil
						}
					}
				})
			}
			_, err = passes.Run(g, passes.Options{Level: 2, Verify: true})
			if err != nil {
				if !errors.Is(err, ir.ErrUnsupported) {
					fmt.Printf("ERR %s: %v\n", d[len("/usr/share/libonnx-testdata/data/"):], err)
				}
				nErr++
				return
			}
			nOK++
			static := true
			partial := false
			for i, o := range g.Outputs {
				t, _, err := onnx.ReadTensorFile(filepath.Join(d, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
				if err != nil {
					continue
				}
				if !o.Shape.Compatible(ir.ShapeOf(t.Shape)) || (o.DType.Valid() && o.DType != t.DType) {
					fmt.Printf("MISMATCH %s out %d: inferred %v[%v], actual %v%v\n", d[len("/usr/share/libonnx-testdata/data/"):], i, o.DType, o.Shape, t.DType, t.Shape)
					nMismatch++
				}
				if !o.Shape.Static() || !o.DType.Valid() {
					static = false
					if os.Getenv("V") != "" {
						fmt.Printf("UNKNOWN %s out %d: %v[%v] (ops %s)\n", filepath.Base(d), i, o.DType, o.Shape, opsOf(g))
					}
				} else {
					partial = true
				}
			}
			if static {
				nStatic++
			} else if partial {
				nPartial++
			}
		}()
		m.Close()
	}
	fmt.Printf("loaded %d, ran %d, errors %d, all outputs static %d, some %d, mismatches %d\n", nLoad, nOK, nErr, nStatic, nPartial, nMismatch)
}

func opsOf(g *ir.Graph) string {
	var s []string
	for _, n := range g.Nodes {
		s = append(s, n.Op)
	}
	return strings.Join(s, ",")
}
