package hugemem

import "syscall"

// adviseHuge asks for huge pages for b (whole huge pages at a huge-page
// boundary). A refusal (a kernel without transparent huge pages) leaves
// ordinary pages, so its error is of no use to the caller.
func adviseHuge(b []byte) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
}
