package llm_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
)

func TestZZDump(t *testing.T) {
	path := os.Getenv("WEFT_BENCH_GGUF")
	if path == "" {
		t.Skip()
	}
	f, _ := gguf.Open(path)
	cfg, w, _ := llama.FromGGUF(f)
	g, _ := llama.Build(cfg, w, llama.Mode{Seq: 1, Capacity: 256, KVType: ir.Float32})
	m, err := weft.New(g, weft.Options{OptLevel: 2})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(m.Session.Plan().Text())
}
