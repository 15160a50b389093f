//go:build !amd64 || noasm

package kernels

// Without the assembly every vector function runs the scalar Go of vec.go.

func actArch(int, []float32) int                      { return 0 }
func expSumArch([]float32, float32) (int, float32)    { return 0, 0 }
func maxArch([]float32) (int, float32)                { return 0, 0 }
func sumArch([]float32) (int, float32)                { return 0, 0 }
func sumSqDevArch([]float32, float32) (int, float32)  { return 0, 0 }
func scaleAddArch([]float32, float32, []float32) int  { return 0 }
func normArch(_, _, _, _ []float32, _, _ float32) int { return 0 }
