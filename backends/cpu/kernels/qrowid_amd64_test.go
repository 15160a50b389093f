//go:build amd64 && !noasm

package kernels

// Without VBMI, AVX-512 QMatMul takes the plain (dot, dot4) kernels
// instead of the grouped ones: the row identity test runs both.
func init() {
	qRowIdentityVariants = append(qRowIdentityVariants, func(f func()) {
		old := hasVBMI
		hasVBMI = false
		defer func() { hasVBMI = old }()
		f()
	})
}
