#version 450
#extension GL_GOOGLE_include_directive : require
// rope: RotaryEmbedding on X [B, H, S, D] with caches [max_pos, R/2] and
// int64 position ids [B, S] (the low word; the executable checks the ids
// are in [0, max_pos) on the host). For i < R/2 the pair (x1, x2) —
// elements (2i, 2i+1) when interleaved, (i, i+R/2) otherwise — becomes
// (x1·c − x2·s, x2·c + x1·s); elements ≥ R are copied. One invocation per
// output element.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer C { float cosc[]; };
layout(std430, set = 0, binding = 2) readonly buffer S { float sinc[]; };
layout(std430, set = 0, binding = 3) readonly buffer I { int pos[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n; // B·H·S·D
    uint h, s, d, r, interleaved;
} p;
#include "common.glsl"

void main() {
    uint e = linear_id(256u);
    if (e >= p.n) {
        return;
    }
    uint dd = e % p.d, row = e / p.d;
    if (dd >= p.r) {
        y[e] = x[e];
        return;
    }
    uint si = row % p.s, b = row / (p.s * p.h);
    uint pp = uint(pos[2u * (b * p.s + si)]);
    uint half_r = p.r / 2u;
    uint i;
    bool first;
    uint o1, o2;
    if (p.interleaved != 0u) {
        i = dd / 2u;
        first = (dd & 1u) == 0u;
        o1 = first ? e : e - 1u;
        o2 = o1 + 1u;
    } else {
        first = dd < half_r;
        i = first ? dd : dd - half_r;
        o1 = first ? e : e - half_r;
        o2 = o1 + half_r;
    }
    float c = cosc[pp * half_r + i], sn = sinc[pp * half_r + i];
    float x1 = x[o1], x2 = x[o2];
    y[e] = first ? x1 * c - x2 * sn : x2 * c + x1 * sn;
}
