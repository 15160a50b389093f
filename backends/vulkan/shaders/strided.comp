#version 450
#extension GL_GOOGLE_include_directive : require
// strided: a strided copy, Y[dy + Σ c_d·sy_d] = X[dx + Σ c_d·sx_d] for every
// coordinate c of the iteration shape (right-aligned to rank 6 by ops.go).
// Source strides may be negative (Slice with negative steps). It moves
// whole tensors for Reshape and its kin, parts of Y for Concat and parts of
// X for Slice.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n;
    int dx;
    uint dy;
    uint shape[6];
    int sx[6];
    uint sy[6];
} p;
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i >= p.n) {
        return;
    }
    int src = p.dx;
    uint dst = p.dy, r = i;
    for (int d = 5; d >= 0; d--) {
        uint c = r % p.shape[d];
        r /= p.shape[d];
        src += int(c) * p.sx[d];
        dst += c * p.sy[d];
    }
    y[dst] = x[src];
}
