#version 450
#extension GL_GOOGLE_include_directive : require
// conv: 2-D convolution, Y = act(Conv(X, W) + B + Z), one invocation per
// output element. X [N, C, H, W], W [M, C/G, KH, KW], B [M], Z (a residual)
// and Y [N, M, OH, OW]; groups G split C and M evenly. Taps in the padding
// read zero. A 1-D convolution comes here with H = KH = OH = 1.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float bias[]; };
layout(std430, set = 0, binding = 3) readonly buffer Z { float z[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n; // N·M·OH·OW
    uint C, H, W, M, OH, OW;
    uint KH, KW, SH, SW, DH, DW;
    int PH, PW;
    uint G;
    uint hasBias, hasZ, act;
    float alpha, beta;
} p;
#include "act.glsl"
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i >= p.n) {
        return;
    }
    uint ow = i % p.OW;
    uint oh = (i / p.OW) % p.OH;
    uint m = (i / (p.OW * p.OH)) % p.M;
    uint b = i / (p.OW * p.OH * p.M);
    uint cg = p.C / p.G;
    uint c0 = (m / (p.M / p.G)) * cg;
    float acc = 0.0;
    for (uint c = 0u; c < cg; c++) {
        uint xb = (b * p.C + c0 + c) * p.H * p.W;
        uint wb = (m * cg + c) * p.KH * p.KW;
        for (uint kh = 0u; kh < p.KH; kh++) {
            int ih = int(oh * p.SH + kh * p.DH) - p.PH;
            if (ih < 0 || ih >= int(p.H)) {
                continue;
            }
            for (uint kw = 0u; kw < p.KW; kw++) {
                int iw = int(ow * p.SW + kw * p.DW) - p.PW;
                if (iw < 0 || iw >= int(p.W)) {
                    continue;
                }
                acc += x[xb + uint(ih) * p.W + uint(iw)] * w[wb + kh * p.KW + kw];
            }
        }
    }
    if (p.hasBias != 0u) {
        acc += bias[m];
    }
    if (p.hasZ != 0u) {
        acc += z[i];
    }
    y[i] = act_apply(p.act, acc, p.alpha, p.beta);
}
