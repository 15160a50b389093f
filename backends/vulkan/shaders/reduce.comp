#version 450
#extension GL_GOOGLE_include_directive : require
// reduce: one workgroup per contiguous row of cols elements; Y[row] is the
// row's sum (mode 0) or mean (mode 1).
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint rows;
    uint cols;
    uint mode;
} p;
#include "common.glsl"
shared float red[128];

void main() {
    uint row = linear_group();
    if (row >= p.rows) {
        return; // uniform across the workgroup
    }
    uint lid = gl_LocalInvocationID.x;
    uint base = row * p.cols;
    float acc = 0.0;
    for (uint c = lid; c < p.cols; c += 128u) {
        acc += x[base + c];
    }
    red[lid] = acc;
    barrier();
    for (uint s = 64u; s > 0u; s >>= 1) {
        if (lid < s) {
            red[lid] += red[lid + s];
        }
        barrier();
    }
    if (lid == 0u) {
        y[row] = p.mode == 1u ? red[0] / float(p.cols) : red[0];
    }
}
