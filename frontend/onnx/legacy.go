package onnx

import "github.com/weftrt/weft/ir"

// Models with a default-domain opset below 7 are imported node by node: a
// node is accepted only when its operator has the same version at the
// model's opset as at opset 7 (so the model means exactly what it would at
// opset 7). Nodes whose operator changed in between (Add-6 with its legacy
// broadcast attribute, BatchNormalization-6, Gemm-6, ...) are unsupported.

// changedBy7 lists, per operator, the opsets in 2..7 that introduced a new
// version of it (from the ONNX operator schemas).
var changedBy7 = map[string][]int64{
	"Abs": {6},
	"Acos": {7},
	"Add": {6, 7},
	"And": {7},
	"Asin": {7},
	"Atan": {7},
	"AveragePool": {7},
	"BatchNormalization": {6, 7},
	"Cast": {6},
	"Ceil": {6},
	"Clip": {6},
	"Concat": {4},
	"Cos": {7},
	"Div": {6, 7},
	"Dropout": {6, 7},
	"Elu": {6},
	"Equal": {7},
	"Exp": {6},
	"Floor": {6},
	"GRU": {3, 7},
	"Gemm": {6, 7},
	"GlobalLpPool": {2},
	"Greater": {7},
	"HardSigmoid": {6},
	"InstanceNormalization": {6},
	"LSTM": {7},
	"LeakyRelu": {6},
	"Less": {7},
	"Log": {6},
	"LpPool": {2},
	"Max": {6},
	"Mean": {6},
	"Min": {6},
	"Mul": {6, 7},
	"Neg": {6},
	"Or": {7},
	"PRelu": {6, 7},
	"Pad": {2},
	"Pow": {7},
	"RNN": {7},
	"Reciprocal": {6},
	"Relu": {6},
	"Reshape": {5},
	"Selu": {6},
	"Sigmoid": {6},
	"Sin": {7},
	"Split": {2},
	"Sqrt": {6},
	"Sub": {6, 7},
	"Sum": {6},
	"Tan": {7},
	"Tanh": {6},
	"Tile": {6},
	"Upsample": {7},
	"Xor": {7},
}

// checkLegacyOpset refuses a node of a pre-opset-7 model whose operator
// version differs from the one opset 7 uses.
func checkLegacyOpset(op string, opset int64) error {
	if opset >= 7 {
		return nil
	}
	for _, v := range changedBy7[op] {
		if v > opset {
			return unsupported("%s changed in opset %d; an opset %d model is imported only where its ops are as in opset 7", op, v, opset)
		}
	}
	return nil
}

var _ = ir.ErrUnsupported
