#version 450
#extension GL_GOOGLE_include_directive : require
// gather: Y[i, :] = T[idx[i], :] along axis 0 of the table T [rows, cols].
// Indices are int64 (two words each, little-endian) or int32; a negative
// index counts from the end. The executable checks the indices' range on
// the host before the dispatch (see exec.go), so every read is in bounds.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer T { float t[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n; // indices · cols
    uint rows, cols, wide;
} p;
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i >= p.n) {
        return;
    }
    uint k = i / p.cols, c = i % p.cols;
    int r = p.wide != 0u ? idx[2u * k] : idx[k]; // the low word of an int64 in range
    if (r < 0) {
        r += int(p.rows);
    }
    y[i] = t[uint(r) * p.cols + c];
}
