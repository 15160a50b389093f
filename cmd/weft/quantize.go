package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// ggufQuantTypes are the types `weft quantize` writes, with llama.cpp's
// general.file_type for a file mostly of that type.
var ggufQuantTypes = map[string]struct {
	dt       ir.DType
	fileType uint32
}{
	"q8_0": {ir.Q8_0, 7},
	"q4_0": {ir.Q4_0, 2},
	"q4_k": {ir.Q4_K, 14}, // MOSTLY_Q4_K_S: every matrix Q4_K
}

// The GGUF quantization policies.
const (
	ggufPolicyDefault = "default"  // every matrix but token_embd and output
	ggufPolicyAll     = "all"      // every matrix
	ggufPolicyFFN     = "ffn-only" // blk.N.ffn_{gate,up,down}.weight
)

var ffnTensor = regexp.MustCompile(`^blk\.[0-9]+\.ffn_(gate|up|down)\.weight$`)

func newQuantizeCmd() *cobra.Command {
	var typ, policy string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "quantize IN.gguf OUT.gguf --type q4_0|q8_0|q4_k [--policy default|all|ffn-only]",
		Short: "quantize a GGUF model's weight matrices",
		Long: "Write OUT.gguf: IN.gguf's metadata (all of it; general.file_type set to\n" +
			"the type) and tensors, with the weight matrices the policy selects encoded\n" +
			"in --type by weft's codecs (ggml's reference encoders for q8_0 and q4_0;\n" +
			"weft's own min/max search for q4_k). A matrix is a 2-D f32, f16 or bf16\n" +
			"tensor whose rows are whole blocks (32 elements, 256 for q4_k); others are\n" +
			"copied unchanged, as are tensors already quantized. Policies: default\n" +
			"(every matrix but token_embd.weight and output.weight), all, ffn-only\n" +
			"(blk.N.ffn_gate/up/down.weight). Progress goes to stderr.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			qt, ok := ggufQuantTypes[strings.ToLower(typ)]
			if !ok {
				return fmt.Errorf("quantize: --type %q: %w (want q8_0, q4_0 or q4_k)", typ, ir.ErrUnsupported)
			}
			var pick func(name string) bool
			switch policy {
			case ggufPolicyDefault:
				pick = func(name string) bool { return name != "token_embd.weight" && name != "output.weight" }
			case ggufPolicyAll:
				pick = func(string) bool { return true }
			case ggufPolicyFFN:
				pick = ffnTensor.MatchString
			default:
				return fmt.Errorf("quantize: --policy %q: want %s, %s or %s", policy, ggufPolicyDefault, ggufPolicyAll, ggufPolicyFFN)
			}
			in, out := args[0], args[1]
			f, err := gguf.Open(in)
			if err != nil {
				return fmt.Errorf("quantize: %w", err)
			}
			defer f.Close()
			var progress io.Writer = cmd.ErrOrStderr()
			if quiet {
				progress = io.Discard
			}
			st, err := quantizeGGUF(f, qt.dt, qt.fileType, pick, out, progress)
			if err != nil {
				return fmt.Errorf("quantize %s: %w", in, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "weft: wrote %s: %d of %d tensors quantized to %v (%d kept: not selected, not a float matrix, or rows not whole blocks); %.1f MB → %.1f MB of tensor data\n",
				out, st.quantized, st.total, qt.dt, st.total-st.quantized, float64(st.inBytes)/1e6, float64(st.outBytes)/1e6)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&typ, "type", "q4_0", "quantized type: q8_0, q4_0 or q4_k")
	f.StringVar(&policy, "policy", ggufPolicyDefault, "which matrices: default (all but token_embd and output), all, ffn-only")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

type quantStats struct {
	total, quantized  int
	inBytes, outBytes int64
}

// quantizeGGUF writes f with the selected matrices encoded in dt.
func quantizeGGUF(f *gguf.File, dt ir.DType, fileType uint32, pick func(string) bool, out string, progress io.Writer) (quantStats, error) {
	w := gguf.NewWriter()
	var st quantStats
	for _, kv := range f.Metadata {
		if err := w.Set(kv.Key, kv.Value); err != nil {
			return st, err
		}
	}
	if err := w.Set("general.file_type", fileType); err != nil {
		return st, err
	}
	if err := w.Set("general.quantization_version", uint32(2)); err != nil {
		return st, err
	}
	st.total = len(f.Tensors)
	for i, info := range f.Tensors {
		t, err := f.Tensor(info.Name)
		if err != nil {
			return st, err
		}
		st.inBytes += int64(len(t.Data))
		if pick(info.Name) && len(t.Shape) == 2 && (t.DType == ir.Float32 || t.DType == ir.Float16 || t.DType == ir.BFloat16) &&
			t.Shape[1]%int64(dt.BlockSize()) == 0 {
			q, err := quant.Quantize(t, dt)
			if err != nil {
				return st, fmt.Errorf("tensor %q: %w", info.Name, err)
			}
			t = q
			st.quantized++
		}
		st.outBytes += int64(len(t.Data))
		if err := w.AddTensor(info.Name, t); err != nil {
			return st, err
		}
		drawProgress(progress, i+1, st.total, info.Name)
	}
	fmt.Fprintln(progress)
	if err := w.WriteFile(out); err != nil {
		return st, errors.Join(fmt.Errorf("writing %s", out), err)
	}
	return st, nil
}

// drawProgress redraws a one-line progress bar.
func drawProgress(w io.Writer, done, total int, what string) {
	const width = 30
	n := width * done / max(total, 1)
	if len(what) > 32 {
		what = what[:32]
	}
	fmt.Fprintf(w, "\r[%s%s] %d/%d %-32s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, what)
}
