// Hand-written; see vec.go. The row reductions and the affine steps of
// softmax and normalization (the exponential ones are in vec_exp_amd64.s).

//go:build !noasm

#include "textflag.h"

// func vecMax512(n int, x *float32) float32
TEXT ·vecMax512(SB), NOSPLIT, $0-20
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VMOVUPS (SI), Z0
	ADDQ $64, SI
	SUBQ $16, CX
max512_loop:
	TESTQ CX, CX
	JEQ max512_done
	VMAXPS (SI), Z0, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JMP max512_loop
max512_done:
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func vecSum512(n int, x *float32) float32
TEXT ·vecSum512(SB), NOSPLIT, $0-20
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VPXORD Z0, Z0, Z0
sum512_loop:
	TESTQ CX, CX
	JEQ sum512_done
	VADDPS (SI), Z0, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JMP sum512_loop
sum512_done:
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VADDPS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func vecSumSqDev512(n int, x *float32, mean float32) float32
TEXT ·vecSumSqDev512(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VBROADCASTSS mean+16(FP), Z6
	VPXORD Z0, Z0, Z0
ssd512_loop:
	TESTQ CX, CX
	JEQ ssd512_done
	VMOVUPS (SI), Z2
	VSUBPS Z6, Z2, Z2
	VFMADD231PS Z2, Z2, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JMP ssd512_loop
ssd512_done:
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VADDPS X1, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func vecScaleAdd512(n int, x *float32, s float32, m *float32)
TEXT ·vecScaleAdd512(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ m+24(FP), DI
	VBROADCASTSS s+16(FP), Z6
	TESTQ DI, DI
	JEQ scale512_loop
scaleadd512_loop:
	TESTQ CX, CX
	JEQ scale512_done
	VMOVUPS (SI), Z2
	VFMADD213PS (DI), Z6, Z2
	VMOVUPS Z2, (SI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP scaleadd512_loop
scale512_loop:
	TESTQ CX, CX
	JEQ scale512_done
	VMULPS (SI), Z6, Z2
	VMOVUPS Z2, (SI)
	ADDQ $64, SI
	SUBQ $16, CX
	JMP scale512_loop
scale512_done:
	VZEROUPPER
	RET

// func vecNorm512(n int, x, y, gm, b *float32, mean, inv float32)
TEXT ·vecNorm512(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ gm+24(FP), DX
	MOVQ b+32(FP), BX
	VBROADCASTSS mean+40(FP), Z6
	VBROADCASTSS inv+44(FP), Z7
	TESTQ BX, BX
	JEQ normnb512_loop
norm512_loop:
	TESTQ CX, CX
	JEQ norm512_done
	VMOVUPS (SI), Z2
	VSUBPS Z6, Z2, Z2
	VMULPS Z7, Z2, Z2
	VMOVUPS (BX), Z3
	VFMADD231PS (DX), Z2, Z3
	VMOVUPS Z3, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, DX
	ADDQ $64, BX
	SUBQ $16, CX
	JMP norm512_loop
normnb512_loop:
	TESTQ CX, CX
	JEQ norm512_done
	VMOVUPS (SI), Z2
	VSUBPS Z6, Z2, Z2
	VMULPS Z7, Z2, Z2
	VMULPS (DX), Z2, Z3
	VMOVUPS Z3, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP normnb512_loop
norm512_done:
	VZEROUPPER
	RET

// func vecMax256(n int, x *float32) float32
TEXT ·vecMax256(SB), NOSPLIT, $0-20
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VMOVUPS (SI), Y0
	ADDQ $32, SI
	SUBQ $8, CX
max256_loop:
	TESTQ CX, CX
	JEQ max256_done
	VMAXPS (SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP max256_loop
max256_done:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func vecSum256(n int, x *float32) float32
TEXT ·vecSum256(SB), NOSPLIT, $0-20
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VXORPS Y0, Y0, Y0
sum256_loop:
	TESTQ CX, CX
	JEQ sum256_done
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP sum256_loop
sum256_done:
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VADDPS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func vecSumSqDev256(n int, x *float32, mean float32) float32
TEXT ·vecSumSqDev256(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VBROADCASTSS mean+16(FP), Y6
	VXORPS Y0, Y0, Y0
ssd256_loop:
	TESTQ CX, CX
	JEQ ssd256_done
	VMOVUPS (SI), Y2
	VSUBPS Y6, Y2, Y2
	VFMADD231PS Y2, Y2, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP ssd256_loop
ssd256_done:
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VADDPS X1, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func vecScaleAdd256(n int, x *float32, s float32, m *float32)
TEXT ·vecScaleAdd256(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ m+24(FP), DI
	VBROADCASTSS s+16(FP), Y6
	TESTQ DI, DI
	JEQ scale256_loop
scaleadd256_loop:
	TESTQ CX, CX
	JEQ scale256_done
	VMOVUPS (SI), Y2
	VFMADD213PS (DI), Y6, Y2
	VMOVUPS Y2, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP scaleadd256_loop
scale256_loop:
	TESTQ CX, CX
	JEQ scale256_done
	VMULPS (SI), Y6, Y2
	VMOVUPS Y2, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JMP scale256_loop
scale256_done:
	VZEROUPPER
	RET

// func vecNorm256(n int, x, y, gm, b *float32, mean, inv float32)
TEXT ·vecNorm256(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ gm+24(FP), DX
	MOVQ b+32(FP), BX
	VBROADCASTSS mean+40(FP), Y6
	VBROADCASTSS inv+44(FP), Y7
	TESTQ BX, BX
	JEQ normnb256_loop
norm256_loop:
	TESTQ CX, CX
	JEQ norm256_done
	VMOVUPS (SI), Y2
	VSUBPS Y6, Y2, Y2
	VMULPS Y7, Y2, Y2
	VMOVUPS (BX), Y3
	VFMADD231PS (DX), Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	ADDQ $32, BX
	SUBQ $8, CX
	JMP norm256_loop
normnb256_loop:
	TESTQ CX, CX
	JEQ norm256_done
	VMOVUPS (SI), Y2
	VSUBPS Y6, Y2, Y2
	VMULPS Y7, Y2, Y2
	VMULPS (DX), Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP normnb256_loop
norm256_done:
	VZEROUPPER
	RET
