package conform

import (
	"math"
	"strings"
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestCompare(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	f32 := func(v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float32, []int64{int64(len(v))}, v) }
	f64 := func(v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float64, []int64{int64(len(v))}, v) }
	typed := func(dt ir.DType, v ...float64) *ir.Tensor { return ir.FromFloat64(dt, []int64{int64(len(v))}, v) }
	u64 := func(v ...uint64) *ir.Tensor {
		t := ir.NewTensor(ir.Uint64, []int64{int64(len(v))})
		for i, x := range v {
			t.SetFloat64(i, 0)
			for b := 0; b < 8; b++ {
				t.Data[i*8+b] = byte(x >> (8 * b))
			}
		}
		return t
	}
	tests := []struct {
		name      string
		got, want *ir.Tensor
		err       string // "" means equal
	}{
		{"equal", f32(1, 2, 3), f32(1, 2, 3), ""},
		{"within rtol", f64(1000.9), f64(1000), ""},                // 0.9 <= 1e-7 + 1e-3*1000
		{"beyond rtol", f64(1001.1), f64(1000), "max abs err 1.1"}, // 1.1 > 1.0000001
		{"within atol at zero", f64(5e-8), f64(0), ""},
		{"beyond atol at zero", f64(2e-7), f64(0), "max abs err 2e-07 at index 0"},
		{"rtol uses want not got", f64(0, 2), f64(0, 1), "max abs err 1 at index 1 (got 2, want 1; 1 of 2 values"},
		{"worst of several", f64(1.1, 0, 3.5), f64(1, 0, 3), "max abs err 0.5 at index 2"},
		{"nan matches nan", f32(nan, 1), f32(nan, 1), ""},
		{"nan vs number", f32(1, nan), f32(1, 2), "at index 1 (got NaN, want 2"},
		{"number vs nan", f32(0), f32(nan), "at index 0 (got 0, want NaN"},
		{"inf matches inf", f32(inf, -inf), f32(inf, -inf), ""},
		{"inf sign", f32(-inf), f32(inf), "max abs err +Inf at index 0"},
		{"finite vs inf", f32(3e38), f32(inf), "at index 0"},
		{"inf vs finite", f64(inf), f64(1e308), "at index 0"},
		{"f16 within", typed(ir.Float16, 0.1), typed(ir.Float16, 0.1), ""},
		{"bf16 off", typed(ir.BFloat16, 1), typed(ir.BFloat16, 1.5), "max abs err 0.5"},
		{"dtype", f32(1), f64(1), "dtype f32, want f64"},
		{"shape rank", ir.FromFloat64(ir.Float32, []int64{1, 2}, []float64{1, 2}), f32(1, 2), "shape [1 2], want [2]"},
		{"scalar vs [1]", ir.FromFloat64(ir.Float32, []int64{}, []float64{1}), f32(1), "shape [], want [1]"},
		{"int exact", typed(ir.Int32, -3, 4), typed(ir.Int32, -3, 4), ""},
		{"int off by one", typed(ir.Int64, -3, 5), typed(ir.Int64, -3, 4), "max abs err 1 at index 1 (got 5, want 4; 1 of 2 values differ)"},
		{"int8 no tolerance", typed(ir.Int8, 100), typed(ir.Int8, 101), "max abs err 1"},
		{"u8", typed(ir.Uint8, 255, 0), typed(ir.Uint8, 255, 1), "at index 1"},
		{"u64 large equal", u64(math.MaxUint64), u64(math.MaxUint64), ""},
		{"u64 large differ", u64(math.MaxUint64 - 1), u64(math.MaxUint64), "got 18446744073709551614, want 18446744073709551615"},
		{"bool equal", typed(ir.Bool, 1, 0), typed(ir.Bool, 1, 0), ""},
		{"bool differ", typed(ir.Bool, 1, 1), typed(ir.Bool, 1, 0), "value mismatch at index 1 (got true, want false"},
		{"empty", ir.NewTensor(ir.Float32, []int64{0, 3}), ir.NewTensor(ir.Float32, []int64{0, 3}), ""},
		{"nil got", nil, f32(1), "no output"},
		{"malformed", &ir.Tensor{DType: ir.Float32, Shape: []int64{2}, Data: make([]byte, 3)}, f32(1, 2), "malformed output"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Compare(tc.got, tc.want, DefaultTolerance)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("unexpected mismatch: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want it to contain %q", err, tc.err)
			}
		})
	}
}

func TestCompareCustomTolerance(t *testing.T) {
	got := ir.FromFloat64(ir.Float32, []int64{1}, []float64{1.05})
	want := ir.FromFloat64(ir.Float32, []int64{1}, []float64{1})
	if err := Compare(got, want, Tolerance{RTol: 0.1}); err != nil {
		t.Errorf("rtol 0.1: %v", err)
	}
	if err := Compare(got, want, Tolerance{ATol: 0.01}); err == nil {
		t.Error("atol 0.01: no error")
	}
}
