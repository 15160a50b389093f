package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
)

func TestInspectGGUF(t *testing.T) {
	w := gguf.NewWriter()
	toks := make([]string, 100)
	for i := range toks {
		toks[i] = "t" + string(rune('a'+i%26))
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"general.architecture", "llama"}, {"llama.block_count", uint32(2)}, {"tokenizer.ggml.tokens", toks}} {
		if err := w.Set(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddTensor("token_embd.weight", ir.NewTensor(ir.Q4_K, []int64{3, 512})); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("output_norm.weight", ir.NewTensor(ir.Float32, []int64{512})); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "inspect", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 3 rows of 512 q4_k elements = 6 super-blocks of 144 bytes = 864;
	// the second tensor starts at the next 32-byte boundary.
	for _, want := range []string{
		"GGUF v3, alignment 32",
		"arch       llama",
		"metadata   3 keys",
		`llama.block_count      uint32         2`,
		`string[100]    ["ta", "tb", "tc", "td", "te", "tf", ... (100 total)]`,
		"tensors    2",
		"token_embd.weight   [3, 512]               q4_k              864",
		"output_norm.weight  [512]                  f32              2048",
		"total      2 tensors, 2,048 elements, 2.8 KiB",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, stdout)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF\x07\x00\x00\x00"+strings.Repeat("\x00", 16)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, "inspect", bad)
	if code != 1 || !strings.Contains(stderr, "unsupported: GGUF version 7") {
		t.Errorf("corrupt GGUF: exit %d, stderr %q", code, stderr)
	}
}
