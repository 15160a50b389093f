package onnx

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// wrapf prefixes err with context, keeping it unwrappable.
func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// unsupported returns an error wrapping ir.ErrUnsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ir.ErrUnsupported)...)
}

// unsupportedOps gives the reason for refusing well-known ONNX operators
// that weft deliberately does not import.
var unsupportedOps = map[string]string{
	"Bernoulli":          "nondeterministic",
	"Multinomial":        "nondeterministic",
	"RandomNormal":       "nondeterministic",
	"RandomNormalLike":   "nondeterministic",
	"RandomUniform":      "nondeterministic",
	"RandomUniformLike":  "nondeterministic",
	"Adagrad":            "training",
	"Adam":               "training",
	"Momentum":           "training",
	"Gradient":           "training",
	"StringNormalizer":   "string tensors",
	"StringConcat":       "string tensors",
	"StringSplit":        "string tensors",
	"RegexFullMatch":     "string tensors",
	"TfIdfVectorizer":    "string tensors",
	"ImageDecoder":       "image decoding",
	"SequenceAt":         "sequences",
	"SequenceConstruct":  "sequences",
	"SequenceEmpty":      "sequences",
	"SequenceErase":      "sequences",
	"SequenceInsert":     "sequences",
	"SequenceLength":     "sequences",
	"SequenceMap":        "sequences",
	"SplitToSequence":    "sequences",
	"ConcatFromSequence": "sequences",
	"Optional":           "optional values",
	"OptionalGetElement": "optional values",
	"OptionalHasElement": "optional values",
	"Col2Im":             "not implemented",
	"AffineGrid":         "not implemented",
	"DeformConv":         "not implemented",
	"ImageScaler":        "experimental, removed from ONNX",
	"Crop":               "experimental, removed from ONNX",
	"ScaledTanh":         "experimental, removed from ONNX",
	"ParametricSoftplus": "experimental, removed from ONNX",
	"Affine":             "experimental, removed from ONNX",
	"GivenTensorFill":    "experimental, removed from ONNX",
	"ConstantFill":       "experimental, removed from ONNX",
	"DynamicSlice":       "experimental, removed from ONNX",
	"GRUUnit":            "experimental, removed from ONNX",
}
