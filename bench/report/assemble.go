package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GoBench is one result line of `go test -bench` output.
type GoBench struct {
	Name    string // without the -GOMAXPROCS suffix
	Iters   int64
	Metrics map[string]float64 // by unit: "ns/op", "GFLOP/s", ...
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// ParseGoBench reads the result lines of `go test -bench` output; other
// lines are skipped.
func ParseGoBench(r io.Reader) ([]GoBench, error) {
	var out []GoBench
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		b := GoBench{Name: procsSuffix.ReplaceAllString(f[0], ""), Iters: iters, Metrics: map[string]float64{}}
		ok := true
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			b.Metrics[f[i+1]] = v
		}
		if ok {
			out = append(out, b)
		}
	}
	return out, sc.Err()
}

// Assemble builds the results of one run from the files run.sh left in
// dir (see bench/README.md for the layout). Missing parts are recorded as
// errors, not guessed.
func Assemble(dir string, now time.Time) (*Results, error) {
	host, _ := os.Hostname()
	r := &Results{Schema: Schema, Date: now.UTC().Format(time.RFC3339), Host: host,
		Machine: machineInfo(), Versions: map[string]string{"go": runtime.Version()}}
	if s, err := os.ReadFile(filepath.Join(dir, "load_start.txt")); err == nil {
		if f := strings.Fields(string(s)); len(f) >= 3 {
			r.Machine.LoadStart = strings.Join(f[:3], " ")
		}
	}
	if err := r.addModels(filepath.Join(dir, "models")); err != nil {
		return nil, err
	}
	if err := r.addLLM(filepath.Join(dir, "llm")); err != nil {
		return nil, err
	}
	if err := r.addGemm(dir); err != nil {
		return nil, err
	}
	if err := r.addNumpy(dir); err != nil {
		return nil, err
	}
	r.finishSgemm()
	if b, err := os.ReadFile(filepath.Join(dir, "versions.txt")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && k != "" {
				r.setVersion(k, v)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				r.Notes = append(r.Notes, l)
			}
		}
	}
	return r, nil
}

// modelFile matches NAME.tT.SIDE.EXT in the models directory.
var modelFile = regexp.MustCompile(`^([A-Za-z0-9_-]+)\.t(\d+)\.(weft|ort)\.(json|err)$`)

func (r *Results) addModels(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		r.Errors = append(r.Errors, "no model benchmarks ran ("+dir+" is missing)")
		return nil
	}
	if err != nil {
		return err
	}
	byKey := map[string]*ModelResult{}
	var keys []string
	for _, e := range entries {
		m := modelFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		threads, _ := strconv.Atoi(m[2])
		key := fmt.Sprintf("%s\x00%04d", m[1], threads)
		mr := byKey[key]
		if mr == nil {
			mr = &ModelResult{Name: m[1], Threads: threads}
			byKey[key] = mr
			keys = append(keys, key)
		}
		path := filepath.Join(dir, e.Name())
		if m[4] == "err" {
			if msg := readErr(path); msg != "" {
				if m[3] == "weft" {
					mr.WeftErr = msg
				} else {
					mr.ORTErr = msg
				}
			}
			continue
		}
		var b Bench
		if err := readJSON(path, &b); err != nil {
			return err
		}
		var extra struct {
			Weft string `json:"weft_version"`
			ORT  string `json:"ort_version"`
		}
		_ = readJSON(path, &extra)
		if m[3] == "weft" {
			mr.Weft = &b
			r.setVersion("weft", extra.Weft)
		} else {
			mr.ORT = &b
			r.setVersion("onnxruntime-node", extra.ORT)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		mr := byKey[k]
		if mr.Weft != nil {
			mr.WeftErr = ""
		}
		if mr.ORT != nil {
			mr.ORTErr = ""
		}
		if mr.Weft != nil && mr.ORT != nil && mr.ORT.LatencyMsMedian > 0 {
			mr.Ratio = round3(mr.Weft.LatencyMsMedian / mr.ORT.LatencyMsMedian)
		}
		if mr.Weft != nil && mr.ORT != nil && mr.ORT.LatencyMsMin > 0 {
			mr.RatioMin = round3(mr.Weft.LatencyMsMin / mr.ORT.LatencyMsMin)
		}
		r.Models = append(r.Models, *mr)
	}
	return nil
}

func (r *Results) setVersion(k, v string) {
	if v != "" {
		r.Versions[k] = v
	}
}

// sgemm finds (or adds) the row for a size and thread count.
func (r *Results) sgemm(size string, threads int) *SgemmResult {
	for i := range r.Sgemm {
		if r.Sgemm[i].Size == size && r.Sgemm[i].Threads == threads {
			return &r.Sgemm[i]
		}
	}
	var m, n, k int
	fmt.Sscanf(size, "%dx%dx%d", &m, &n, &k)
	r.Sgemm = append(r.Sgemm, SgemmResult{M: m, N: n, K: k, Size: size, Threads: threads})
	return &r.Sgemm[len(r.Sgemm)-1]
}

// addGemm reads bench/gemm's output (gemm.txt) and the whole-graph
// MatMul benchmark's (matmul.txt).
func (r *Results) addGemm(dir string) error {
	benches, err := parseFile(filepath.Join(dir, "gemm.txt"))
	if err != nil {
		r.Errors = append(r.Errors, "bench/gemm: "+errText(err, filepath.Join(dir, "gemm.err")))
	}
	for _, b := range benches {
		parts := strings.Split(b.Name, "/")
		switch {
		case parts[0] == "BenchmarkSgemm" && len(parts) == 3:
			if t, ok := threadsOf(parts[2]); ok {
				r.sgemm(parts[1], t).WeftKernel = round2(b.Metrics["GFLOP/s"])
			}
		case parts[0] == "BenchmarkReadBandwidth" && len(parts) == 2:
			if t, ok := threadsOf(parts[1]); ok {
				r.ReadBandwidth = append(r.ReadBandwidth, Bandwidth{Threads: t, GBps: round2(b.Metrics["GB/s"])})
			}
		case parts[0] == "BenchmarkQGemv" && len(parts) == 5:
			if t, ok := threadsOf(parts[3]); ok {
				r.QGemv = append(r.QGemv, QGemvResult{DType: strings.ToLower(parts[1]), Shape: parts[2], Threads: t,
					Mode: parts[4], GBps: round2(b.Metrics["GB/s"])})
			}
		}
	}
	for i := range r.QGemv {
		for _, bw := range r.ReadBandwidth {
			if bw.Threads == r.QGemv[i].Threads && bw.GBps > 0 {
				r.QGemv[i].Fraction = round3(r.QGemv[i].GBps / bw.GBps)
			}
		}
	}
	benches, err = parseFile(filepath.Join(dir, "matmul.txt"))
	if err != nil {
		r.Errors = append(r.Errors, "BenchmarkMatMulGraph: "+errText(err, filepath.Join(dir, "matmul.err")))
	}
	for _, b := range benches {
		parts := strings.Split(b.Name, "/")
		if parts[0] == "BenchmarkMatMulGraph" && len(parts) == 3 {
			if t, ok := threadsOf(parts[2]); ok {
				r.sgemm(parts[1], t).WeftGraph = round2(b.Metrics["GFLOP/s"])
			}
		}
	}
	return nil
}

// numpyRun is what bench/numpy/sgemm.py prints.
type numpyRun struct {
	Numpy    string         `json:"numpy"`
	Threads  int            `json:"threads"`
	Coretype string         `json:"coretype"`
	OpenBLAS map[string]any `json:"openblas"`
	Results  []struct {
		M, N, K    int
		GflopsMean float64 `json:"gflops_mean"`
	} `json:"results"`
}

var numpyFile = regexp.MustCompile(`^numpy\.([A-Za-z0-9_]+)\.t(\d+)\.json$`)

func (r *Results) addNumpy(dir string) error {
	files, _ := filepath.Glob(filepath.Join(dir, "numpy.*.json"))
	for _, f := range files {
		m := numpyFile.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			continue
		}
		t, _ := strconv.Atoi(m[2])
		var run numpyRun
		if err := readJSON(f, &run); err != nil {
			r.Errors = append(r.Errors, "numpy: "+err.Error())
			continue
		}
		r.setVersion("numpy", run.Numpy)
		if v, ok := run.OpenBLAS["version"].(string); ok {
			r.setVersion("openblas", v)
		}
		setting := m[1]
		if arch, ok := run.OpenBLAS["architecture"].(string); ok && !strings.EqualFold(arch, setting) {
			setting += " (kernel " + arch + ")"
		}
		for _, x := range run.Results {
			row := r.sgemm(fmt.Sprintf("%dx%dx%d", x.M, x.N, x.K), t)
			if row.OpenBLAS == nil {
				row.OpenBLAS = map[string]float64{}
			}
			row.OpenBLAS[setting] = round2(x.GflopsMean)
		}
	}
	return nil
}

// finishSgemm picks the best OpenBLAS setting per row, computes ratios
// and orders the rows by size then threads.
func (r *Results) finishSgemm() {
	for i := range r.Sgemm {
		s := &r.Sgemm[i]
		if s.M == 0 {
			fmt.Sscanf(s.Size, "%dx%dx%d", &s.M, &s.N, &s.K)
		}
		best := 0.0
		for k, v := range s.OpenBLAS {
			if v > best || v == best && k < s.OpenBLASBest {
				best, s.OpenBLASBest = v, k
			}
		}
		if best > 0 && s.WeftKernel > 0 {
			s.Ratio = round3(s.WeftKernel / best)
		}
		if best > 0 && s.WeftGraph > 0 {
			s.RatioGraph = round3(s.WeftGraph / best)
		}
	}
	slices.SortStableFunc(r.Sgemm, func(a, b SgemmResult) int {
		fa, fb := float64(a.M)*float64(a.N)*float64(a.K), float64(b.M)*float64(b.N)*float64(b.K)
		switch {
		case a.N*a.K != b.N*b.K:
			return a.N*a.K - b.N*b.K
		case fa != fb:
			if fa < fb {
				return -1
			}
			return 1
		}
		return a.Threads - b.Threads
	})
}

func parseFile(path string) ([]GoBench, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseGoBench(f)
}

func errText(err error, errFile string) string {
	if s := readErr(errFile); s != "" {
		return s
	}
	return err.Error()
}

// threadsOf parses "tN".
func threadsOf(s string) (int, bool) {
	if !strings.HasPrefix(s, "t") {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	return n, err == nil && n > 0
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
