package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// ggufQuantTypes are the types `weft quantize` writes, with llama.cpp's
// general.file_type for a file mostly of that type. A mix (q4_k_m) names
// its main type in dt and picks per tensor with mix.
var ggufQuantTypes = map[string]struct {
	dt       ir.DType
	fileType uint32
	mix      func(name string, layers int) ir.DType
}{
	"q8_0":   {ir.Q8_0, 7, nil},
	"q4_0":   {ir.Q4_0, 2, nil},
	"q4_k":   {ir.Q4_K, 14, nil}, // MOSTLY_Q4_K_S: every matrix Q4_K
	"q6_k":   {ir.Q6_K, 18, nil},
	"q4_k_m": {ir.Q4_K, 15, q4KMType},
}

// blkTensor matches a layer's tensor name: blk.N.rest.
var blkTensor = regexp.MustCompile(`^blk\.([0-9]+)\.(.+)$`)

// q4KMType is the Q4_K_M mix as llama.cpp makes it: output.weight and,
// in the first and last eighth of the layers and every third one between,
// attn_v.weight and ffn_down.weight in Q6_K; every other matrix Q4_K.
func q4KMType(name string, layers int) ir.DType {
	if name == "output.weight" {
		return ir.Q6_K
	}
	m := blkTensor.FindStringSubmatch(name)
	if m == nil || (m[2] != "attn_v.weight" && m[2] != "ffn_down.weight") {
		return ir.Q4_K
	}
	i, _ := strconv.Atoi(m[1])
	if i < layers/8 || i >= 7*layers/8 || (i-layers/8)%3 == 2 {
		return ir.Q6_K
	}
	return ir.Q4_K
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
		Use:   "quantize IN.gguf OUT.gguf --type q4_0|q8_0|q4_k|q6_k|q4_k_m [--policy default|all|ffn-only]",
		Short: "quantize a GGUF model's weight matrices",
		Long: "Write OUT.gguf: IN.gguf's metadata (all of it; general.file_type set to\n" +
			"the type) and tensors, with the weight matrices the policy selects encoded\n" +
			"in --type by weft's codecs (ggml's reference encoders for q8_0 and q4_0;\n" +
			"weft's own min/max search for q4_k and q6_k; q4_k_m is llama.cpp's mix:\n" +
			"q6_k for output.weight and for attn_v and ffn_down in the first and last\n" +
			"eighth of the layers and every third one between, q4_k for the rest). A\n" +
			"matrix is a 2-D f32, f16 or bf16 tensor whose rows are whole blocks (32\n" +
			"elements, 256 for the k-quants); others are copied unchanged, as are\n" +
			"tensors already quantized. Policies: default (every matrix but\n" +
			"token_embd.weight and output.weight), all, ffn-only\n" +
			"(blk.N.ffn_gate/up/down.weight). Progress goes to stderr.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			qt, ok := ggufQuantTypes[strings.ToLower(typ)]
			if !ok {
				return fmt.Errorf("quantize: --type %q: %w (want q8_0, q4_0, q4_k, q6_k or q4_k_m)", typ, ir.ErrUnsupported)
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
			typeFor := func(string) ir.DType { return qt.dt }
			what := qt.dt.String()
			if qt.mix != nil {
				layers := ggufLayers(f)
				typeFor = func(name string) ir.DType { return qt.mix(name, layers) }
				what = strings.ToLower(typ) + " (q4_k and q6_k)"
			}
			st, err := quantizeGGUF(f, typeFor, qt.fileType, pick, out, progress)
			if err != nil {
				return fmt.Errorf("quantize %s: %w", in, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "weft: wrote %s: %d of %d tensors quantized to %s (%d kept: not selected, not a float matrix, or rows not whole blocks); %.1f MB → %.1f MB of tensor data\n",
				out, st.quantized, st.total, what, st.total-st.quantized, float64(st.inBytes)/1e6, float64(st.outBytes)/1e6)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&typ, "type", "q4_0", "quantized type: q8_0, q4_0, q4_k, q6_k or q4_k_m")
	f.StringVar(&policy, "policy", ggufPolicyDefault, "which matrices: default (all but token_embd and output), all, ffn-only")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

type quantStats struct {
	total, quantized  int
	inBytes, outBytes int64
}

// ggufLayers is the model's block count (its arch's block_count key), or
// one more than the highest blk.N in its tensor names.
func ggufLayers(f *gguf.File) int {
	if n, err := f.Uint32(f.Architecture() + ".block_count"); err == nil {
		return int(n)
	}
	n := 0
	for _, info := range f.Tensors {
		if m := blkTensor.FindStringSubmatch(info.Name); m != nil {
			i, _ := strconv.Atoi(m[1])
			n = max(n, i+1)
		}
	}
	return n
}

// quantizeGGUF writes f with the selected matrices encoded in the type
// typeFor gives their name.
func quantizeGGUF(f *gguf.File, typeFor func(name string) ir.DType, fileType uint32, pick func(string) bool, out string, progress io.Writer) (quantStats, error) {
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
		dt := typeFor(info.Name)
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
