package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/weftrt/weft"
	_ "github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/conform"
	"github.com/weftrt/weft/ir"
)

func main() {
	tests, err := conform.Discover(os.Args[1:]...)
	if err != nil {
		panic(err)
	}
	r := conform.NewRunner(weft.Options{OptLevel: 2, Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}})
	var mu sync.Mutex
	on := map[string]string{}
	open := r.Open
	r.Open = func(path string, feeds []*ir.Tensor) (conform.Model, error) {
		m, err := open(path, feeds)
		if wm, ok := m.(*weft.Model); ok && err == nil {
			var v, c []string
			for _, p := range wm.Plan.Partitions {
				for _, n := range p.Nodes {
					if p.Device == "vulkan:0" {
						v = append(v, n.Op)
					} else {
						c = append(c, n.Op)
					}
				}
			}
			mu.Lock()
			if len(v) > 0 {
				kind := "all"
				if len(c) > 0 {
					kind = "part"
				}
				on[filepath.Base(filepath.Dir(path))] = kind
			}
			mu.Unlock()
		}
		return m, err
	}
	res := r.Run(context.Background(), tests, nil)
	var all, part []string
	for _, x := range res {
		if x.Status == conform.Pass {
			switch on[x.Name] {
			case "all":
				all = append(all, x.Name)
			case "part":
				part = append(part, x.Name)
			}
		}
	}
	sort.Strings(all)
	sort.Strings(part)
	fmt.Printf("ALL (%d): %s\n\nPART (%d): %s\n", len(all), strings.Join(all, " "), len(part), strings.Join(part, " "))
}
