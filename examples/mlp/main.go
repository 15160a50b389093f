package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/mlp/model"
	"github.com/weftrt/weft/ir"
)

func main() {
	opt := flag.Int("O", 2, "optimization level (0, 1, 2)")
	runs := flag.Int("n", 100, "number of timed runs")
	flag.Parse()
	log.SetFlags(0)

	t0 := time.Now()
	g, err := model.Build()
	if err != nil {
		log.Fatal(err)
	}
	opts := weft.DefaultOptions()
	opts.OptLevel = *opt
	m, err := weft.New(g, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	compile := time.Since(t0)

	x := model.Input()
	ctx := context.Background()
	var outs map[string]*ir.Tensor
	t1 := time.Now()
	for i := 0; i < max(*runs, 1); i++ {
		if outs, err = m.Run(ctx, map[string]*ir.Tensor{"x": x}); err != nil {
			log.Fatal(err)
		}
	}
	perRun := time.Since(t1) / time.Duration(max(*runs, 1))

	probs := outs[m.OutputNames()[0]]
	fmt.Printf("mlp: x %v -> probs %v\n", x, probs)
	for r := 0; r < int(probs.Shape[0]); r++ {
		best, sum := 0, 0.0
		for c := 0; c < int(probs.Shape[1]); c++ {
			p := probs.Float64(r*int(probs.Shape[1]) + c)
			sum += p
			if p > probs.Float64(r*int(probs.Shape[1])+best) {
				best = c
			}
		}
		fmt.Printf("  row %d: class %d (p=%.4f), probabilities sum to %.6f\n",
			r, best, probs.Float64(r*int(probs.Shape[1])+best), sum)
	}
	fmt.Printf("build+compile %v, run %v (mean of %d)\n", compile.Round(time.Microsecond), perRun.Round(time.Microsecond), max(*runs, 1))
}
