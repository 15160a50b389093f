package main

import (
	"fmt"
	"math"
	"os"

	"github.com/weftrt/weft/npy"
)

func main() {
	a, err := npy.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	b, err := npy.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	worst, mx := 0.0, 0.0
	for i := 0; i < a.Len(); i++ {
		worst = math.Max(worst, math.Abs(a.Float64(i)-b.Float64(i)))
		mx = math.Max(mx, math.Abs(a.Float64(i)))
	}
	fmt.Println(os.Args[1], a.Shape, "max abs diff", worst, "max abs", mx)
}
