#version 450
#extension GL_GOOGLE_include_directive : require
// qmatmul: Y[m, n] = Σ_k X[m, k] · W[n, k] with W [N, K] block-quantized
// along K in 32-element blocks, read as raw bytes from uint words and
// dequantized here:
//   fmt 0, Q8_0: 34 bytes a block: f16 scale d, 32 × int8 q; w = d·q
//   fmt 1, Q4_0: 18 bytes a block: f16 scale d, 16 bytes whose low nibble
//                is element j and high nibble element j+16; w = d·(q−8)
// Blocks are 2-byte aligned (34 and 18 are even), so a scale never
// straddles two words. One invocation per output element.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint m, n, k, fmt;
} p;
#include "common.glsl"

uint byte_at(uint o) {
    return (w[o >> 2] >> ((o & 3u) * 8u)) & 0xffu;
}

float half_at(uint o) {
    return unpackHalf2x16((w[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu).x;
}

void main() {
    uint i = linear_id(64u);
    if (i >= p.m * p.n) {
        return;
    }
    uint row = i / p.n, col = i % p.n;
    uint nb = p.k / 32u;
    uint xo = row * p.k;
    float acc = 0.0;
    if (p.fmt == 0u) {
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
    y[i] = acc;
}
