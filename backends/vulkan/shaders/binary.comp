#version 450
#extension GL_GOOGLE_include_directive : require
// binary: Y = A op B with numpy broadcasting. Shapes are right-aligned to
// rank 6 by ops.go; a broadcast dim has stride 0.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n;
    uint op; // 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Max, 5 Min (NaN propagates)
    uint shape[6];
    uint sa[6];
    uint sb[6];
} p;
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i >= p.n) {
        return;
    }
    uint ia = 0u, ib = 0u, r = i;
    for (int d = 5; d >= 0; d--) {
        uint c = r % p.shape[d];
        r /= p.shape[d];
        ia += c * p.sa[d];
        ib += c * p.sb[d];
    }
    float u = a[ia], v = b[ib];
    float o;
    switch (p.op) {
    case 0u: o = u + v; break;
    case 1u: o = u - v; break;
    case 2u: o = u * v; break;
    case 3u: o = u / v; break;
    case 4u: o = isnan(u) || isnan(v) ? u + v : max(u, v); break;
    default: o = isnan(u) || isnan(v) ? u + v : min(u, v); break;
    }
    y[i] = o;
}
