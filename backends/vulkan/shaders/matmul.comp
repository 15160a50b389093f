#version 450
#extension GL_GOOGLE_include_directive : require
// matmul: Y[z] = act(A[z] · B[z] + Bias) for the z-th matrix of a batch,
// in 16×16 tiles staged through shared memory. A is M×K, B is K×N, Y is
// M×N, all row-major. The batch index z walks the broadcast batch shape
// (right-aligned to rank 4 by ops.go); A's and B's batch strides are 0
// where they broadcast. Bias, when present, is indexed with strides over
// (batch dims, M, N), 0 where it broadcasts.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) readonly buffer C { float bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint M;
    uint N;
    uint K;
    uint act;
    uint bshape[4];
    uint sa[4];
    uint sb[4];
    uint sc[4];
    uint scm;
    uint scn;
    uint hasBias;
    float alpha;
    float beta;
} p;
#include "act.glsl"
shared float As[16][17];
shared float Bs[16][17];

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint col = gl_WorkGroupID.x * 16u + lx;
    uint row = gl_WorkGroupID.y * 16u + ly;
    uint z = gl_WorkGroupID.z;
    uint ao = 0u, bo = 0u, co = 0u, r = z;
    for (int d = 3; d >= 0; d--) {
        uint c = r % p.bshape[d];
        r /= p.bshape[d];
        ao += c * p.sa[d];
        bo += c * p.sb[d];
        co += c * p.sc[d];
    }
    float acc = 0.0;
    for (uint t = 0u; t < p.K; t += 16u) {
        As[ly][lx] = (row < p.M && t + lx < p.K) ? a[ao + row * p.K + t + lx] : 0.0;
        Bs[ly][lx] = (t + ly < p.K && col < p.N) ? b[bo + (t + ly) * p.N + col] : 0.0;
        barrier();
        for (uint k = 0u; k < 16u; k++) {
            acc += As[ly][k] * Bs[k][lx];
        }
        barrier();
    }
    if (row < p.M && col < p.N) {
        if (p.hasBias != 0u) {
            acc += bias[co + row * p.scm + col * p.scn];
        }
        y[(z * p.M + row) * p.N + col] = act_apply(p.act, acc, p.alpha, p.beta);
    }
}
