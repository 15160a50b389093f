#version 450
#extension GL_GOOGLE_include_directive : require
// pool: 2-D MaxPool (mode 0) and AveragePool (mode 1) over X [N·C, H, W]
// into Y [N·C, OH, OW], one invocation per output element. Window taps
// outside the input are skipped; AveragePool divides by the taps inside
// the input, or with includePad by those inside the padded input
// [-pb, in + pe) on each axis (as the CPU reference does).
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n; // N·C·OH·OW
    uint H, W, OH, OW;
    uint KH, KW;
    uint SH, SW, DH, DW;
    int PBH, PBW, PEH, PEW;
    uint mode, includePad;
} p;
#include "common.glsl"

void main() {
    uint i = linear_id(256u);
    if (i >= p.n) {
        return;
    }
    uint ow = i % p.OW;
    uint oh = (i / p.OW) % p.OH;
    uint nc = i / (p.OW * p.OH);
    uint base = nc * p.H * p.W;
    float acc = p.mode == 0u ? -1.0 / 0.0 : 0.0;
    uint count = 0u, padded = 0u;
    for (uint kh = 0u; kh < p.KH; kh++) {
        int ih = int(oh * p.SH + kh * p.DH) - p.PBH;
        for (uint kw = 0u; kw < p.KW; kw++) {
            int iw = int(ow * p.SW + kw * p.DW) - p.PBW;
            bool inH = ih >= 0 && ih < int(p.H), inW = iw >= 0 && iw < int(p.W);
            if (ih >= -p.PBH && ih < int(p.H) + p.PEH && iw >= -p.PBW && iw < int(p.W) + p.PEW) {
                padded++;
            }
            if (!inH || !inW) {
                continue;
            }
            float v = x[base + uint(ih) * p.W + uint(iw)];
            if (p.mode == 0u) {
                acc = max(acc, v);
            } else {
                acc += v;
            }
            count++;
        }
    }
    if (p.mode == 1u) {
        acc /= float(p.includePad != 0u ? padded : count);
    }
    y[i] = acc;
}
