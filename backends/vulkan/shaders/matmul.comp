#version 450
#extension GL_GOOGLE_include_directive : require
// matmul: Y[z] = act(A[z] · B[z] + Bias) for the z-th matrix of a batch,
// in 16×16 tiles staged through shared memory. A is M×K, B is K×N, Y is
// M×N, all row-major. The batch index z walks the broadcast batch shape
// (right-aligned to rank 4 by ops.go); A's and B's batch strides are 0
// where they broadcast. Bias, when present, is indexed with strides over
// (batch dims, M, N), 0 where it broadcasts.
//
// Variants (generate.go compiles this file once per set of macros):
//   (none)      matmul.spv:      f32 storage, f32 arithmetic
//   W_F16       matmul_wf16.spv: B stored as f16 (16-bit storage), the rest
//               f32, f32 arithmetic
//   ALL_F16     matmul_f16.spv:  A, B, Bias and Y stored as f16, f32
//               arithmetic (each product and the sum in f32, Y rounded once)
//   ALL_F16 + ARITH_F16  matmul_f16a.spv: as ALL_F16, but the tiles sit in
//               shared memory as f16 and each 16-term tile dot product is
//               computed in f16 (shaderFloat16), then added to an f32 sum.
#if defined(W_F16) || defined(ALL_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#ifdef ARITH_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#ifdef ALL_F16
#define AT float16_t
#define YT float16_t
#else
#define AT float
#define YT float
#endif
#if defined(W_F16) || defined(ALL_F16)
#define BT float16_t
#else
#define BT float
#endif
#ifdef ARITH_F16
#define ST float16_t
#else
#define ST float
#endif
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, set = 0, binding = 0) readonly buffer A { AT a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { BT b[]; };
layout(std430, set = 0, binding = 2) readonly buffer C { YT bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { YT y[]; };
layout(push_constant) uniform P {
    uint M;
    uint N;
    uint K;
    uint act;
    uint bshape[4];
    uint sa[4];
    uint sb[4];
    uint sc[4];
    uint scm;
    uint scn;
    uint hasBias;
    float alpha;
    float beta;
} p;
#include "act.glsl"
shared ST As[16][17];
shared ST Bs[16][17];

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint col = gl_WorkGroupID.x * 16u + lx;
    uint row = gl_WorkGroupID.y * 16u + ly;
    uint z = gl_WorkGroupID.z;
    uint ao = 0u, bo = 0u, co = 0u, r = z;
    for (int d = 3; d >= 0; d--) {
        uint c = r % p.bshape[d];
        r /= p.bshape[d];
        ao += c * p.sa[d];
        bo += c * p.sb[d];
        co += c * p.sc[d];
    }
    float acc = 0.0;
    for (uint t = 0u; t < p.K; t += 16u) {
        As[ly][lx] = (row < p.M && t + lx < p.K) ? ST(a[ao + row * p.K + t + lx]) : ST(0.0);
        Bs[ly][lx] = (t + ly < p.K && col < p.N) ? ST(b[bo + (t + ly) * p.N + col]) : ST(0.0);
        barrier();
#ifdef ARITH_F16
        float16_t part = float16_t(0.0);
        for (uint k = 0u; k < 16u; k++) {
            part += As[ly][k] * Bs[k][lx];
        }
        acc += float(part);
#else
        for (uint k = 0u; k < 16u; k++) {
            acc += As[ly][k] * Bs[k][lx];
        }
#endif
        barrier();
    }
    if (row < p.M && col < p.N) {
        if (p.hasBias != 0u) {
            acc += float(bias[co + row * p.scm + col * p.scn]);
        }
        y[(z * p.M + row) * p.N + col] = YT(act_apply(p.act, acc, p.alpha, p.beta));
    }
}
