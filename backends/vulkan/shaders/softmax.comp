#version 450
#extension GL_GOOGLE_include_directive : require
// softmax: one workgroup per contiguous row of cols elements:
// Y = exp(X - max) / sum(exp(X - max)).
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint rows;
    uint cols;
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
    float m = -1.0 / 0.0;
    for (uint c = lid; c < p.cols; c += 128u) {
        m = max(m, x[base + c]);
    }
    red[lid] = m;
    barrier();
    for (uint s = 64u; s > 0u; s >>= 1) {
        if (lid < s) {
            red[lid] = max(red[lid], red[lid + s]);
        }
        barrier();
    }
    m = red[0];
    barrier();
    float sum = 0.0;
    for (uint c = lid; c < p.cols; c += 128u) {
        sum += exp(x[base + c] - m);
    }
    red[lid] = sum;
    barrier();
    for (uint s = 64u; s > 0u; s >>= 1) {
        if (lid < s) {
            red[lid] += red[lid + s];
        }
        barrier();
    }
    float inv = 1.0 / red[0];
    for (uint c = lid; c < p.cols; c += 128u) {
        y[base + c] = exp(x[base + c] - m) * inv;
    }
}
