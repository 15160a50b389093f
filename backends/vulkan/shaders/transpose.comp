#version 450
#extension GL_GOOGLE_include_directive : require
// transpose: Y[i] = X[src(i)], where src walks Y's shape (right-aligned to
// rank 6) with X's strides permuted to Y's dim order.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n;
    uint shape[6];
    uint sx[6];
} p;
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i >= p.n) {
        return;
    }
    uint src = 0u, r = i;
    for (int d = 5; d >= 0; d--) {
        uint c = r % p.shape[d];
        r /= p.shape[d];
        src += c * p.sx[d];
    }
    y[i] = x[src];
}
