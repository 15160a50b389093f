//go:build !noasm

#include "textflag.h"

// func readAVX512(p unsafe.Pointer, n, d int) uint64
//
// Four 64-byte loads (256 bytes) per iteration into four accumulators;
// with d > 0, four PREFETCHT0 d bytes ahead first.
TEXT ·readAVX512(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ d+16(FP), DX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	TESTQ CX, CX
	JEQ r512_done
	TESTQ DX, DX
	JEQ r512_plain
r512_pf:
	PREFETCHT0 (SI)(DX*1)
	PREFETCHT0 64(SI)(DX*1)
	PREFETCHT0 128(SI)(DX*1)
	PREFETCHT0 192(SI)(DX*1)
	VPADDQ (SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JNZ r512_pf
	JMP r512_done
r512_plain:
	VPADDQ (SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JNZ r512_plain
r512_done:
	VPADDQ Z1, Z0, Z0
	VPADDQ Z3, Z2, Z2
	VPADDQ Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSRLDQ $8, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func readAVX2(p unsafe.Pointer, n, d int) uint64
//
// Eight 32-byte loads (256 bytes) per iteration into four accumulators;
// with d > 0, four PREFETCHT0 d bytes ahead first.
TEXT ·readAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ d+16(FP), DX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	TESTQ CX, CX
	JEQ r2_done
r2_loop:
	TESTQ DX, DX
	JEQ r2_load
	PREFETCHT0 (SI)(DX*1)
	PREFETCHT0 64(SI)(DX*1)
	PREFETCHT0 128(SI)(DX*1)
	PREFETCHT0 192(SI)(DX*1)
r2_load:
	VPADDQ (SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	VPADDQ 128(SI), Y0, Y0
	VPADDQ 160(SI), Y1, Y1
	VPADDQ 192(SI), Y2, Y2
	VPADDQ 224(SI), Y3, Y3
	ADDQ $256, SI
	SUBQ $256, CX
	JNZ r2_loop
r2_done:
	VPADDQ Y1, Y0, Y0
	VPADDQ Y3, Y2, Y2
	VPADDQ Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSRLDQ $8, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET
