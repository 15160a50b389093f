package kernels

import (
	"fmt"
	"sync/atomic"
)

// ISA is an instruction-set level the kernels can use.
type ISA int32

// The ISA levels, lowest first. Each level needs the hardware features of
// the levels below it.
const (
	Generic ISA = iota // plain Go, every GOARCH
	AVX2               // amd64: AVX2, FMA, F16C
	AVX512             // amd64: AVX-512 F/BW/VL/DQ (+VNNI for the quantized kernels)
	NEON               // arm64: Advanced SIMD (every ARMv8-A core)
	DotProd            // arm64: NEON + SDOT (FEAT_DotProd, ARMv8.2+)
	I8MM               // arm64: DotProd + SMMLA (FEAT_I8MM, ARMv8.6+)
)

var isaNames = [...]string{Generic: "generic", AVX2: "avx2", AVX512: "avx512", NEON: "neon", DotProd: "dotprod", I8MM: "i8mm"}

// isaArch is the GOARCH of each level's instructions ("" for Generic).
// Levels are ordered only within one GOARCH.
var isaArch = [...]string{AVX2: "amd64", AVX512: "amd64", NEON: "arm64", DotProd: "arm64", I8MM: "arm64"}

func (i ISA) String() string {
	if i >= 0 && int(i) < len(isaNames) {
		return isaNames[i]
	}
	return fmt.Sprintf("isa(%d)", int32(i))
}

// best is the highest level this machine supports (set by detectISA).
var best = detectISA()

// current is the level in use: best unless lowered by SetISA.
var current atomic.Int32

func init() { current.Store(int32(best)) }

// BestISA returns the highest level the machine supports.
func BestISA() ISA { return best }

// CurrentISA returns the level the kernels use now.
func CurrentISA() ISA { return ISA(current.Load()) }

// supported reports whether the machine can run level i: Generic, or a
// level of best's GOARCH no higher than best.
func supported(i ISA) bool {
	return i == Generic || (isaArch[i] == isaArch[best] && i <= best)
}

// Levels returns the levels this machine supports, lowest first (Generic
// first; BestISA last).
func Levels() []ISA {
	var l []ISA
	for i := range ISA(len(isaNames)) {
		if supported(i) {
			l = append(l, i)
		}
	}
	return l
}

// SetISA forces the kernels to a level by name ("avx512", "avx2", "i8mm",
// "dotprod", "neon", "generic"), for tests and benchmarks, and returns the
// previous level. It fails for an unknown name or a level the machine
// lacks. Panel layouts depend on the level: pack B again after changing it.
func SetISA(name string) (ISA, error) {
	for i, n := range isaNames {
		if n == name {
			if !supported(ISA(i)) {
				return CurrentISA(), fmt.Errorf("kernels: ISA %s not supported on this machine (best is %s)", name, best)
			}
			return ISA(current.Swap(int32(i))), nil
		}
	}
	return CurrentISA(), fmt.Errorf("kernels: unknown ISA %q (want one of %v)", name, isaNames)
}
