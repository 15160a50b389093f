//go:build !linux

package hugemem

// adviseHuge does nothing where there is no madvise(MADV_HUGEPAGE).
func adviseHuge([]byte) {}

// Available reports false: no transparent huge pages here.
func Available() bool { return false }
