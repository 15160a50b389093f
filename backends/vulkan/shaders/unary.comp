#version 450
#extension GL_GOOGLE_include_directive : require
// unary: Y[i] = act(X[i]) for the activations of act.glsl.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n;
    uint op;
    float alpha;
    float beta;
} p;
#include "act.glsl"
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i < p.n) {
        y[i] = act_apply(p.op, x[i], p.alpha, p.beta);
    }
}
