//go:build !noasm

#include "textflag.h"

// quantActsAVX2(nb int, x *float32, qs *int8, d *float32, nsum *int32)
// quantizes nb blocks of 32 floats at x exactly as QuantizeActs' scalar
// loop does: amax = max |x|, d = amax/127 (float32 division), inv = 1/d
// (0 when d is 0), q = round-half-even(x·inv) (VCVTPS2DQ under Go's default
// MXCSR rounding) clamped to [-127, 127], nsum = -Σq.
//
// Registers: SI x, DI qs, R8 d, R9 nsum, CX blocks left; Y15 abs mask,
// Y14 int32 127, Y13 int32 -127, Y12 the VPERMD order fixing the packs,
// X11 float 127, X10 float 1, X9 zero.
TEXT ·quantActsAVX2(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ d+24(FP), R8
	MOVQ nsum+32(FP), R9
	MOVL $0x7FFFFFFF, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $127, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $-127, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	VMOVDQU qactPerm<>(SB), Y12
	MOVL $0x42FE0000, AX
	VMOVD AX, X11
	MOVL $0x3F800000, AX
	VMOVD AX, X10
	VXORPS X9, X9, X9
	TESTQ CX, CX
	JEQ done

loop:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	// amax
	VANDPS Y15, Y0, Y4
	VANDPS Y15, Y1, Y5
	VANDPS Y15, Y2, Y6
	VANDPS Y15, Y3, Y7
	VMAXPS Y5, Y4, Y4
	VMAXPS Y7, Y6, Y6
	VMAXPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X4
	VMOVHLPS X4, X4, X5
	VMAXPS X5, X4, X4
	VPSHUFD $1, X4, X5
	VMAXSS X5, X4, X4
	// d = amax/127, inv = d != 0 ? 1/d : 0
	VDIVSS X11, X4, X5
	VMOVSS X5, (R8)
	VDIVSS X5, X10, X6
	VCMPSS $4, X9, X5, X7
	VANDPS X7, X6, X6
	VBROADCASTSS X6, Y6
	// q = clamp(round(x·inv))
	VMULPS Y6, Y0, Y0
	VMULPS Y6, Y1, Y1
	VMULPS Y6, Y2, Y2
	VMULPS Y6, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPMINSD Y14, Y0, Y0
	VPMINSD Y14, Y1, Y1
	VPMINSD Y14, Y2, Y2
	VPMINSD Y14, Y3, Y3
	VPMAXSD Y13, Y0, Y0
	VPMAXSD Y13, Y1, Y1
	VPMAXSD Y13, Y2, Y2
	VPMAXSD Y13, Y3, Y3
	// nsum = -Σq
	VPADDD Y1, Y0, Y4
	VPADDD Y3, Y2, Y5
	VPADDD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0x4E, X4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0xB1, X4, X5
	VPADDD X5, X4, X4
	VMOVD X4, AX
	NEGL AX
	MOVL AX, (R9)
	// pack to bytes in element order
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y12, Y0
	VMOVDQU Y0, (DI)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, R8
	ADDQ $4, R9
	DECQ CX
	JNE loop

done:
	VZEROUPPER
	RET

DATA qactPerm<>+0(SB)/4, $0
DATA qactPerm<>+4(SB)/4, $4
DATA qactPerm<>+8(SB)/4, $1
DATA qactPerm<>+12(SB)/4, $5
DATA qactPerm<>+16(SB)/4, $2
DATA qactPerm<>+20(SB)/4, $6
DATA qactPerm<>+24(SB)/4, $3
DATA qactPerm<>+28(SB)/4, $7
GLOBL qactPerm<>(SB), RODATA|NOPTR, $32
