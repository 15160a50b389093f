// act.glsl: the scalar activations shared by unary.comp and matmul.comp.
// The codes match the actXXX constants in ops.go. Each formula is the one
// of the CPU reference kernel, in float32.

const uint ACT_NONE = 0u;
const uint ACT_RELU = 1u;
const uint ACT_SIGMOID = 2u;
const uint ACT_TANH = 3u;
const uint ACT_GELU = 4u;
const uint ACT_GELU_TANH = 5u;
const uint ACT_SILU = 6u;
const uint ACT_EXP = 7u;
const uint ACT_LEAKY_RELU = 8u;
const uint ACT_CLIP = 9u;
const uint ACT_NEG = 10u;
const uint ACT_ABS = 11u;
const uint ACT_SQRT = 12u;
const uint ACT_RECIPROCAL = 13u;
const uint ACT_LOG = 14u;
const uint ACT_ERF = 15u;
const uint ACT_HARD_SIGMOID = 16u;

// sigmoid never overflows exp.
float act_sigmoid(float x) {
    if (x >= 0.0) {
        return 1.0 / (1.0 + exp(-x));
    }
    float e = exp(x);
    return e / (1.0 + e);
}

// act_tanh clamps first: some drivers evaluate tanh through exp(2x) and
// return NaN for large |x|; tanh(±10) is ±1 in float32 anyway.
float act_tanh(float x) {
    return tanh(clamp(x, -10.0, 10.0));
}

// act_erf is erf from Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
float act_erf(float x) {
    float s = sign(x);
    float a = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-a * a);
    return s * y;
}

float act_apply(uint op, float x, float alpha, float beta) {
    switch (op) {
    case ACT_RELU:
        return x < 0.0 ? 0.0 : x;
    case ACT_SIGMOID:
        return act_sigmoid(x);
    case ACT_TANH:
        return act_tanh(x);
    case ACT_GELU:
        return 0.5 * x * (1.0 + act_erf(x * 0.70710678118654752));
    case ACT_GELU_TANH:
        return 0.5 * x * (1.0 + act_tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case ACT_SILU:
        return x * act_sigmoid(x);
    case ACT_EXP:
        return exp(x);
    case ACT_LEAKY_RELU:
        return x < 0.0 ? alpha * x : x;
    case ACT_CLIP:
        // Raise to alpha, then lower to beta (beta wins when alpha > beta).
        x = x < alpha ? alpha : x;
        return x > beta ? beta : x;
    case ACT_NEG:
        return -x;
    case ACT_ABS:
        return abs(x);
    case ACT_SQRT:
        return sqrt(x);
    case ACT_RECIPROCAL:
        return 1.0 / x;
    case ACT_LOG:
        return log(x);
    case ACT_ERF:
        return act_erf(x);
    case ACT_HARD_SIGMOID:
        return clamp(alpha * x + beta, 0.0, 1.0);
    }
    return x;
}
