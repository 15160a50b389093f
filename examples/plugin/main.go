// Command plugin is the worked example of docs/backends.md: it imports the
// toy backend (examples/plugin/toyaccel), builds a small graph, places the
// ops the toy supports on it with --place-style rules, prints the plan with
// every placement's cause, runs it, and checks the outputs against a
// CPU-only compile of the same graph. Nothing outside examples/plugin knows
// the toy backend: importing it is what enables it.
//
//	go run ./examples/plugin
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"os"

	"github.com/weftrt/weft"
	_ "github.com/weftrt/weft/examples/plugin/toyaccel" // registers "toy" in init()
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

func main() {
	log.SetFlags(0)
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// rules send every op the toy has a kernel for to it; the toy refuses the
// Add with a broadcast bias, which falls back to the CPU with a warning.
var rules = []string{"Relu=toy", "Add=toy", "Mul=toy"}

// build makes y = Relu(x·W + bias) * Relu(x2 + x2), with shapes annotated.
func build() (*ir.Graph, error) {
	b := ir.NewBuilder("plugin-demo")
	x := b.Input("x", ir.Float32, ir.S(4, 8))
	x2 := b.Input("x2", ir.Float32, ir.S(4, 6))
	w := ir.NewTensor(ir.Float32, []int64{8, 6})
	for i := range w.Len() {
		w.SetFloat64(i, math.Sin(float64(i)))
	}
	bias := ir.FromFloat32([]int64{6}, []float32{0.5, -0.5, 0.25, -0.25, 0, 1})
	h := b.Op("MatMul", x, b.Const("W", w))
	h = b.Op("Add", h, b.Const("bias", bias)) // broadcasts [4,6] + [6]: not on the toy
	h = b.Op("Relu", h)
	s := b.Op("Relu", b.Op("Add", x2, x2))
	b.Output("y", b.Op("Mul", h, s))
	g, err := b.Build()
	if err != nil {
		return nil, err
	}
	return g, passes.InferShapes(g)
}

func inputs() map[string]*ir.Tensor {
	x := ir.NewTensor(ir.Float32, []int64{4, 8})
	x2 := ir.NewTensor(ir.Float32, []int64{4, 6})
	for i := range x.Len() {
		x.SetFloat64(i, math.Cos(float64(i)*0.7))
	}
	for i := range x2.Len() {
		x2.SetFloat64(i, float64(i%5)-1.5)
	}
	return map[string]*ir.Tensor{"x": x, "x2": x2}
}

// run compiles the graph for cpu+toy and for cpu alone, runs both and
// compares; it returns an error when they disagree or nothing ran on the toy.
func run(w io.Writer) error {
	ctx := context.Background()
	g, err := build()
	if err != nil {
		return err
	}
	// -O0 keeps the ops as written (at -O2 the MatMul, Add and Relu fuse
	// into one FusedMatMul, which the toy does not run).
	m, err := weft.New(g, weft.Options{OptLevel: 0, Place: rules})
	if err != nil {
		return fmt.Errorf("compile for cpu+toy: %w", err)
	}
	defer m.Close()
	fmt.Fprintf(w, "rules: %v\n%s", rules, m.Plan.Text())
	onToy := 0
	for _, part := range m.Plan.Partitions {
		if part.Device == "toy:0" {
			onToy += len(part.Nodes)
		}
	}
	if onToy == 0 {
		return fmt.Errorf("no node was placed on the toy device")
	}

	ref, err := build()
	if err != nil {
		return err
	}
	cpu, err := weft.New(ref, weft.Options{OptLevel: 0, Target: []string{"cpu"}})
	if err != nil {
		return fmt.Errorf("compile for cpu: %w", err)
	}
	defer cpu.Close()

	got, err := m.Run(ctx, inputs())
	if err != nil {
		return fmt.Errorf("run on cpu+toy: %w", err)
	}
	want, err := cpu.Run(ctx, inputs())
	if err != nil {
		return fmt.Errorf("run on cpu: %w", err)
	}
	gy, wy := got["y"].Float32s(), want["y"].Float32s()
	if len(gy) != len(wy) {
		return fmt.Errorf("y has %d elements on cpu+toy, %d on cpu", len(gy), len(wy))
	}
	for i := range gy {
		if gy[i] != wy[i] { // the same arithmetic in the same order: exact
			return fmt.Errorf("y[%d] = %g on cpu+toy, %g on cpu", i, gy[i], wy[i])
		}
	}
	nonzero := 0
	for _, v := range gy {
		if v != 0 {
			nonzero++
		}
	}
	fmt.Fprintf(w, "%d nodes ran on toy:0; y%v (%d of %d elements nonzero) matches the CPU exactly: %v\n", onToy, got["y"].Shape, nonzero, len(gy), gy)
	return nil
}
