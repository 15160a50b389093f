#version 450
#extension GL_GOOGLE_include_directive : require
// norm: one workgroup per contiguous row of cols elements.
// mode 0, LayerNormalization: Y = (X - mean) / sqrt(var + eps) * S + B;
// mode 1, RMSNormalization:   Y = X / sqrt(mean(X²) + eps) * S.
// S and B hold one value per column (ops.go checks their shapes).
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer S { float s[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint rows;
    uint cols;
    uint mode;
    uint hasBias;
    float eps;
} p;
#include "common.glsl"
shared float red[128];

float rowSum(float v) {
    uint lid = gl_LocalInvocationID.x;
    red[lid] = v;
    barrier();
    for (uint k = 64u; k > 0u; k >>= 1) {
        if (lid < k) {
            red[lid] += red[lid + k];
        }
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    uint row = linear_group();
    if (row >= p.rows) {
        return; // uniform across the workgroup
    }
    uint lid = gl_LocalInvocationID.x;
    uint base = row * p.cols;
    float mean = 0.0;
    if (p.mode == 0u) {
        float acc = 0.0;
        for (uint c = lid; c < p.cols; c += 128u) {
            acc += x[base + c];
        }
        mean = rowSum(acc) / float(p.cols);
    }
    float acc = 0.0;
    for (uint c = lid; c < p.cols; c += 128u) {
        float d = x[base + c] - mean;
        acc += d * d;
    }
    float inv = inversesqrt(rowSum(acc) / float(p.cols) + p.eps);
    for (uint c = lid; c < p.cols; c += 128u) {
        float v = (x[base + c] - mean) * inv * s[c];
        if (p.hasBias != 0u) {
            v += b[c];
        }
        y[base + c] = v;
    }
}
