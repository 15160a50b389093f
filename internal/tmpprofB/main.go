// Command tmpprofB profiles a model's runs (temporary, helper B).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

func main() {
	threads := flag.Int("t", 1, "threads")
	runs := flag.Int("n", 20, "runs")
	prof := flag.String("prof", "", "cpu profile")
	flag.Parse()
	runtime.GOMAXPROCS(*threads)
	o := weft.DefaultOptions()
	o.Threads = *threads
	m, err := weft.Open(flag.Arg(0), o)
	if err != nil {
		panic(err)
	}
	feed := map[string]*ir.Tensor{}
	inputs := make([]*ir.Tensor, len(m.Inputs()))
	for i, v := range m.Inputs() {
		if v.IsConst() {
			inputs[i] = v.Const
			continue
		}
		shp := make([]int64, len(v.Shape))
		for j, d := range v.Shape {
			shp[j] = d.Size
		}
		t := ir.NewTensor(ir.Float32, shp)
		f := t.Float32s()
		for j := range f {
			f[j] = float32(j%17)/17 - 0.5
		}
		inputs[i] = t
		feed[v.Name] = t
	}
	first, err := m.Run(context.Background(), feed)
	if err != nil {
		panic(err)
	}
	outputs := make([]*ir.Tensor, len(m.Outputs()))
	for i, name := range m.OutputNames() {
		outputs[i] = ir.NewTensor(first[name].DType, slices.Clone(first[name].Shape))
	}
	for range 3 {
		m.RunInto(context.Background(), inputs, outputs)
	}
	if *prof != "" {
		f, _ := os.Create(*prof)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var lat []float64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	defer func() {
		runtime.ReadMemStats(&ms1)
		fmt.Printf("mallocs/run %.1f bytes/run %.0f\n", float64(ms1.Mallocs-ms0.Mallocs)/float64(*runs), float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(*runs))
	}()
	for range *runs {
		s := time.Now()
		if err := m.RunInto(context.Background(), inputs, outputs); err != nil {
			panic(err)
		}
		lat = append(lat, float64(time.Since(s).Microseconds())/1000)
	}
	sort.Float64s(lat)
	fmt.Printf("min %.2f med %.2f ms\n", lat[0], lat[len(lat)/2])
}
