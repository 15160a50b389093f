//go:build !noasm

package kernels

func cpuidex(leaf, sub uint32) (a, b, c, d uint32)

// lastLevelCache reads the cache hierarchy from CPUID's deterministic
// cache parameters leaf (4 on Intel, 0x8000001D on AMD), each level's
// size being ways × partitions × line size × sets, or 0 where the CPU (or
// the hypervisor) leaves it empty. AMD's leaf 0x80000006 is not used: its
// L3 size can be the whole socket's (a Zen 5 guest here reports 508 MB,
// sixteen dies' worth), not what one core's die holds.
func lastLevelCache() int64 {
	maxStd, _, _, _ := cpuidex(0, 0)
	amd := amdCPU()
	maxExt, _, _, _ := cpuidex(0x80000000, 0)
	leaf := uint32(4)
	switch {
	case amd && maxExt >= 0x8000001D:
		leaf = 0x8000001D
	case amd || maxStd < 4:
		return 0
	}
	var best int64
	bestLevel := uint32(0)
	for sub := uint32(0); sub < 16; sub++ {
		a, b, c, _ := cpuidex(leaf, sub)
		typ, level := a&0x1F, (a>>5)&7
		if typ == 0 {
			break
		}
		if typ == 2 { // instruction cache
			continue
		}
		size := int64(b>>22+1) * int64((b>>12)&0x3FF+1) * int64(b&0xFFF+1) * int64(c+1)
		if level > bestLevel || (level == bestLevel && size > best) {
			best, bestLevel = size, level
		}
	}
	return best
}

// amdCPU reports whether CPUID's vendor is AMD ("AuthenticAMD") or Hygon
// ("HygonGenuine", whose cores are AMD's Zen).
func amdCPU() bool {
	_, b, c, d := cpuidex(0, 0)
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163 || // "AuthenticAMD"
		b == 0x6f677948 && d == 0x6e65476e && c == 0x656e6975 // "HygonGenuine"
}
