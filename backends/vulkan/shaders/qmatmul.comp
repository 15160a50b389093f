#version 450
#extension GL_GOOGLE_include_directive : require
// qmatmul: Y[m, n] = Σ_k X[m, k] · W[n, k] with W [N, K] block-quantized
// along K in 32-element blocks, read as raw bytes from uint words and
// dequantized here:
//   fmt 0, Q8_0: 34 bytes a block: f16 scale d, 32 × int8 q; w = d·q
//   fmt 1, Q4_0: 18 bytes a block: f16 scale d, 16 bytes whose low nibble
//                is element j and high nibble element j+16; w = d·(q−8)
//   fmt 2, F16:  2 bytes an element, widened with unpackHalf2x16
//   fmt 3, BF16: 2 bytes an element, the high half of an f32
// Blocks are 2-byte aligned (34 and 18 are even), so a scale never
// straddles two words. One invocation per output element.
//
// Built with W_F16 (qmatmul_f16.spv), W is read as float16_t through
// 16-bit storage (storageBuffer16BitAccess) instead, for f16 weights only.
#ifdef W_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
#ifdef W_F16
layout(std430, set = 0, binding = 1) readonly buffer W { float16_t w[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
#endif
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint m, n, k, fmt;
} p;
#include "common.glsl"

#ifndef W_F16
uint byte_at(uint o) {
    return (w[o >> 2] >> ((o & 3u) * 8u)) & 0xffu;
}

float half_at(uint o) {
    return unpackHalf2x16((w[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu).x;
}

float bf16_at(uint o) {
    return uintBitsToFloat(((w[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu) << 16);
}
#endif

void main() {
    uint i = linear_id(64u);
    if (i >= p.m * p.n) {
        return;
    }
    uint row = i / p.n, col = i % p.n;
    uint nb = p.k / 32u;
    uint xo = row * p.k;
    float acc = 0.0;
#ifdef W_F16
    uint wo = col * p.k;
    for (uint k = 0u; k < p.k; k++) {
        acc += x[xo + k] * float(w[wo + k]);
    }
#else
    if (p.fmt == 2u || p.fmt == 3u) {
        uint wo = col * p.k * 2u;
        for (uint k = 0u; k < p.k; k++) {
            float wv = p.fmt == 2u ? half_at(wo + 2u * k) : bf16_at(wo + 2u * k);
            acc += x[xo + k] * wv;
        }
    } else if (p.fmt == 0u) {
        for (uint b = 0u; b < nb; b++) {
            uint bo = (col * nb + b) * 34u;
            float d = half_at(bo);
            float s = 0.0;
            for (uint j = 0u; j < 32u; j++) {
                int q = bitfieldExtract(int(byte_at(bo + 2u + j)), 0, 8);
                s += x[xo + b * 32u + j] * float(q);
            }
            acc += d * s;
        }
    } else {
        for (uint b = 0u; b < nb; b++) {
            uint bo = (col * nb + b) * 18u;
            float d = half_at(bo);
            float s = 0.0;
            for (uint j = 0u; j < 16u; j++) {
                uint q = byte_at(bo + 2u + j);
                s += x[xo + b * 32u + j] * (float(q & 15u) - 8.0);
                s += x[xo + b * 32u + j + 16u] * (float(q >> 4) - 8.0);
            }
            acc += d * s;
        }
    }
#endif
    y[i] = acc;
}
