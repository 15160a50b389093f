package hugemem

import (
	"os"
	"strings"
	"syscall"
)

// adviseHuge asks for huge pages for b (whole huge pages at a huge-page
// boundary). A refusal (a kernel without transparent huge pages) leaves
// ordinary pages, so its error is of no use to the caller.
func adviseHuge(b []byte) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
}

// Available reports whether transparent huge pages can back memory
// advised for them: /sys/kernel/mm/transparent_hugepage/enabled selects
// "always" or "madvise".
func Available() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return false
	}
	s := string(b)
	return strings.Contains(s, "[always]") || strings.Contains(s, "[madvise]")
}
