// Package zoo is weft's model zoo: builders for benchmark- and test-shaped
// models (ResNet-18/50, BERT encoders, a GPT decoder), in the form ONNX
// exporters produce.
//
// The graphs look like what torch.onnx writes for the same PyTorch modules:
// weights named after the module state dict (layer1.0.conv1.weight,
// bert.encoder.layer.3.attention.self.query.weight, ...), nodes named by
// module path (/layer1/layer1.0/conv1/Conv), Conv followed by
// BatchNormalization, Linear as MatMul + Add(bias, ·) (Gemm on 2-D input),
// LayerNorm decomposed into ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add, GELU in its
// erf (BERT) or tanh (GPT) form, attention as Reshape/Transpose/MatMul/
// Softmax chains with an additive or Where mask, and, with symbolic
// dimensions, shapes computed at run time by Shape/Gather/Unsqueeze/Concat.
// So weft's optimizing passes (folding, CSE, Conv+BN, pattern recognition,
// fusion) have the same work to do as on exported models.
//
// Weights are random from a fixed seed (each tensor seeded by the seed and
// its name), deterministic, and scaled so that activations stay finite and
// of moderate size: they are for benchmarking and testing, not inference.
// Dimensions are static unless a config asks for symbolic batch/sequence.
//
// zoo builds ir graphs only: it imports ir and the standard library, and
// must not know about passes, backends or file formats (the CLI writes the
// graphs with frontend/onnx).
package zoo
