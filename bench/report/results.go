package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// Schema is the version of the results format written here.
const Schema = 1

// Results is one `make bench` run: the file saved under bench/results/.
type Results struct {
	Schema   int               `json:"schema"`
	Date     string            `json:"date"` // RFC 3339, UTC
	Host     string            `json:"host"`
	Machine  Machine           `json:"machine"`
	Versions map[string]string `json:"versions"`
	Models   []ModelResult     `json:"models"`
	Sgemm    []SgemmResult     `json:"sgemm"`
	// ReadBandwidth is the streaming read bandwidth measured in the same
	// run (bench/gemm BenchmarkReadBandwidth), GB/s by thread count.
	ReadBandwidth []Bandwidth   `json:"read_bandwidth"`
	QGemv         []QGemvResult `json:"qgemv"`
	Errors        []string      `json:"errors,omitempty"`
	Notes         []string      `json:"notes,omitempty"`
	// LLM is the language-model section (absent from files written before
	// it existed, and when run.sh skipped it).
	LLM []LLMResult `json:"llm,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPU string `json:"cpu"`
	// CPUID is the x86 family and model (/proc/cpuinfo), which tell
	// CPU generations apart where the model name does not ("AMD EPYC"
	// in a guest: family 25 is Zen 3/4, 26 Zen 5).
	CPUID string `json:"cpuid,omitempty"`
	// ISA is the highest level weft's CPU kernels run at here
	// (kernels.BestISA: avx512, avx2, ...).
	ISA       string `json:"isa,omitempty"`
	Cores     int    `json:"cores"`
	OS        string `json:"os"`
	LoadStart string `json:"load_start,omitempty"` // /proc/loadavg before the run
	LoadEnd   string `json:"load_end,omitempty"`   // and after it
}

// Bench is the object `weft bench --json` and bench/ort/bench.mjs print
// (the fields this report uses).
type Bench struct {
	Model           string  `json:"model"`
	Threads         int     `json:"threads"`
	Runs            int     `json:"runs"`
	LatencyMsMedian float64 `json:"latency_ms_median"`
	LatencyMsMin    float64 `json:"latency_ms_min"`
	LatencyMsMax    float64 `json:"latency_ms_max"`
	PeakRSSBytes    *int64  `json:"peak_rss_bytes"`
	CompileMs       float64 `json:"compile_ms"`
	FirstRunMs      float64 `json:"first_run_ms"`
	Runtime         string  `json:"runtime"`
}

// ModelResult compares weft with ONNX Runtime on one model file at one
// thread count. Ratio is weft's median latency over ORT's (lower is
// better for weft; 0 when either side is missing); RatioMin is the same
// for the fastest runs, which other jobs on a shared machine disturb least.
type ModelResult struct {
	Name     string  `json:"name"`
	Threads  int     `json:"threads"`
	Weft     *Bench  `json:"weft,omitempty"`
	ORT      *Bench  `json:"ort,omitempty"`
	WeftErr  string  `json:"weft_error,omitempty"`
	ORTErr   string  `json:"ort_error,omitempty"`
	Ratio    float64 `json:"ratio_weft_over_ort,omitempty"`
	RatioMin float64 `json:"ratio_min_weft_over_ort,omitempty"`
	WeftArgs string  `json:"weft_args,omitempty"`
}

// SgemmResult is one sgemm size at one thread count, in GFLOP/s (mean
// over the timed repetitions). Ratio is weft's kernel over the best
// OpenBLAS setting (higher is better for weft); RatioGraph is the whole
// weft path (weft.New, Model.RunInto) over the same.
type SgemmResult struct {
	M, N, K      int                `json:"-"`
	Size         string             `json:"size"` // "M×N×K"
	Threads      int                `json:"threads"`
	WeftKernel   float64            `json:"weft_kernel_gflops,omitempty"`
	WeftGraph    float64            `json:"weft_graph_gflops,omitempty"`
	OpenBLAS     map[string]float64 `json:"openblas_gflops,omitempty"` // by OPENBLAS_CORETYPE setting
	OpenBLASBest string             `json:"openblas_best,omitempty"`   // the setting with the most GFLOP/s
	Ratio        float64            `json:"ratio_weft_over_openblas,omitempty"`
	RatioGraph   float64            `json:"ratio_graph_over_openblas,omitempty"`
}

// Bandwidth is a read bandwidth at a thread count.
type Bandwidth struct {
	Threads int     `json:"threads"`
	GBps    float64 `json:"gb_per_s"`
}

// QGemvResult is one quantized GEMV (decode) benchmark: GB/s of weight
// bytes, and its fraction of the read bandwidth at the same thread count.
type QGemvResult struct {
	DType    string  `json:"dtype"`
	Shape    string  `json:"shape"` // N×K
	Threads  int     `json:"threads"`
	Mode     string  `json:"mode"` // hot (one matrix, may sit in L3) or cold (cycles through >= 256 MB)
	GBps     float64 `json:"gb_per_s"`
	Fraction float64 `json:"fraction_of_read,omitempty"`
}

// Read decodes a results file.
func Read(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: results schema %d; this tool reads schema %d", path, r.Schema, Schema)
	}
	return &r, nil
}

// Write encodes r to path (indented, newline-terminated).
func Write(path string, r *Results) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Newest returns the newest results file in dir: the greatest name, as
// names start with the date (YYYYMMDD-HHMMSS-host.json).
func Newest(dir string) (string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no results (*.json) in %s: run `make bench`", dir)
	}
	slices.Sort(names)
	return names[len(names)-1], nil
}

// FileName is the results file name for a run at t on host.
func FileName(t time.Time, host string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, host)
	if safe == "" {
		safe = "host"
	}
	return t.UTC().Format("20060102-150405") + "-" + safe + ".json"
}

// machineInfo describes this machine (Linux details where available).
func machineInfo() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, ISA: kernels.BestISA().String()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU, m.CPUID = cpuInfo(string(data))
	}
	m.LoadEnd = loadAvg()
	return m
}

// cpuInfo returns the model name of the first processor in cpuinfo (the
// text of /proc/cpuinfo) and its family and model ("family 25 model 1"),
// each "" where absent.
func cpuInfo(cpuinfo string) (name, id string) {
	var family, model string
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			if name != "" || family != "" {
				break // the end of the first processor's block
			}
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			name = strings.TrimSpace(v)
		case "cpu family":
			family = strings.TrimSpace(v)
		case "model":
			model = strings.TrimSpace(v)
		}
	}
	if family != "" && model != "" {
		id = "family " + family + " model " + model
	}
	return name, id
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// readJSON decodes path into v; a missing file is reported as such.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readErr returns the text of path (the stderr a failed step left), or ""
// when there is none.
func readErr(path string) string {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || err != nil {
		return ""
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 600 {
		s = s[len(s)-600:]
	}
	return s
}
