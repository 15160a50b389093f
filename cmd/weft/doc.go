// Command weft is the command line of the weft graph compiler and runtime.
//
//	weft compile MODEL [-o FILE.wplan] [-O N] [--dim SYM=N ...] [--quantize TYPE] [--policy P] [--layers a,b] [--print-after PASS] [--report] [--verify]
//	weft run MODEL|FILE.wplan [--target cpu,vulkan] [--place RULE]... [--threads T] [--trace FILE.json] [--verify-weights] [--input NAME=FILE.npy ...] [--dim SYM=N ...] [--output-dir DIR] [-O N] [-v]
//	weft run --example mlp
//	weft inspect --example mlp
//	weft inspect MODEL
//	weft conform [--json FILE] [--baseline FILE] [--markdown FILE] [-O N] DIR...
//	weft zoo NAME -o FILE.onnx [--batch N] [--seq N] [--seed S] [--symbolic] [--opset N]
//	weft generate MODEL.gguf|MODEL.bin [-p TEXT|IDS] [-n N] [--ids] [--temp T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [--stop IDS] [--ctx N] [--kv-type f16|f32|q8_0] [--overflow stop|slide]
//	weft chat MODEL.gguf [--system TEXT] [--format chatml|llama-2|llama-3] [--ctx N] [--kv-type f16|f32|q8_0]
//	weft bench MODEL.gguf [--prefill N] [--decode N] [--kv-type f16|f32|q8_0] [--json]
//	weft quantize IN.gguf OUT.gguf --type q4_0|q8_0|q4_k|q6_k|q4_k_m [--policy default|all|ffn-only]
//	weft tokenize MODEL.gguf [--add-special] [--parse-special] [--decode] TEXT|-
//	weft plan MODEL [--target cpu,vulkan] [--profile NAME|FILE] [--place RULE]... [--dot FILE] [--html FILE]
//	weft calibrate [-o profile.json]
//	weft bench MODEL|FILE.wplan [--threads T] [--runs N] [--json]
//	weft mkllm -o OUT.gguf [--preset llama-110m|tiny] [--type f16|q8_0|q4_0|...] [--arch llama|qwen2] [--seed S]
//
// The command is thin: it turns flags into calls of package weft (Open, New,
// Load, Model.Run), npy and conform, and formats their results. It holds no
// compiler or runtime logic of its own.
//
// Exit status: 0 on success; 1 on an error; 3 when `weft conform` ran but a
// test failed or a suite fell below its baseline (so that scripts can tell a
// broken run from a red one).
package main
