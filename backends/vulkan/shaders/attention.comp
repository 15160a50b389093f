#version 450
#extension GL_GOOGLE_include_directive : require
// attention: Y[b,h,q,:] = softmax(Q[b,h,q,:]·K[b,g,j,:]ᵀ·scale + Mask[b,h,q,j])·V[b,g,:,:]
// with g = h / (H/Hkv) (grouped-query), one invocation per (b, h, q), an
// online softmax over the keys. Causal: query q sees keys j ≤ q + Skv - Sq.
// The mask is additive, indexed with strides over (b, h, q, j), 0 where it
// broadcasts. A row with no visible key is all NaN, as 0/0 in the reference.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Q { float qs[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { float ks[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { float vs[]; };
layout(std430, set = 0, binding = 3) readonly buffer Mk { float mask[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint rows; // B·H·Sq
    uint H, Hkv, Sq, Skv, D, Dv;
    float scale;
    uint causal, hasMask;
    uint ms[4];
} p;
#include "common.glsl"

const uint MAXDV = 256u;

void main() {
    uint i = linear_id(64u);
    if (i >= p.rows) {
        return;
    }
    uint q = i % p.Sq;
    uint h = (i / p.Sq) % p.H;
    uint b = i / (p.Sq * p.H);
    uint g = h / (p.H / p.Hkv);
    uint qb = i * p.D;
    uint kb = (b * p.Hkv + g) * p.Skv;
    float acc[MAXDV];
    for (uint d = 0u; d < p.Dv; d++) {
        acc[d] = 0.0;
    }
    float m = -1.0 / 0.0, l = 0.0;
    uint last = p.Skv;
    if (p.causal != 0u) {
        // keys j <= q + Skv - Sq; none when Sq > q + Skv.
        int lim = int(q) + int(p.Skv) - int(p.Sq);
        last = lim < 0 ? 0u : min(uint(lim) + 1u, p.Skv);
    }
    for (uint j = 0u; j < last; j++) {
        float s = 0.0;
        uint kr = (kb + j) * p.D;
        for (uint d = 0u; d < p.D; d++) {
            s += qs[qb + d] * ks[kr + d];
        }
        s *= p.scale;
        if (p.hasMask != 0u) {
            s += mask[b * p.ms[0] + h * p.ms[1] + q * p.ms[2] + j * p.ms[3]];
        }
        if (s == -1.0 / 0.0) {
            continue; // weight exp(-inf - m) = 0
        }
        float mn = max(m, s);
        float corr = exp(m - mn), e = exp(s - mn);
        l = l * corr + e;
        uint vr = (kb + j) * p.Dv;
        for (uint d = 0u; d < p.Dv; d++) {
            acc[d] = acc[d] * corr + e * vs[vr + d];
        }
        m = mn;
    }
    uint yb = i * p.Dv;
    for (uint d = 0u; d < p.Dv; d++) {
        y[yb + d] = acc[d] / l;
    }
}
