package onnx

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weftrt/weft/ir"
)

// FuzzParse feeds arbitrary bytes to Parse: it must fail cleanly or return a
// graph that verifies; it must never panic.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "")
		if err != nil {
			return
		}
		if err := ir.Verify(m.Graph); err != nil {
			t.Fatalf("imported graph does not verify: %v", err)
		}
		for _, c := range m.Graph.Consts {
			if err := c.Const.Check(); err != nil {
				t.Fatalf("constant %v: %v", c, err)
			}
		}
	})
}

// FuzzReadTensor feeds arbitrary bytes to ReadTensor.
func FuzzReadTensor(f *testing.F) {
	for _, s := range tensorSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tt, _, err := ReadTensor(data)
		if err != nil {
			return
		}
		if err := tt.Check(); err != nil {
			t.Fatalf("tensor does not check: %v", err)
		}
	})
}

func parseSeeds() []pb {
	body := graphPB("body",
		gIn(vi("i", dtInt64)), gIn(vi("c", dtBool)), gIn(vi("a", dtFloat, 1)),
		gNode(nodePB("Add", "", []string{"a", "w"}, []string{"a2"})),
		gOut(vi("c", dtBool)), gOut(vi("a2", dtFloat, 1)))
	return []pb{
		modelPB(13, graphPB("g",
			gIn(vi("x", dtFloat, "batch", 2)),
			gInit(rawTensor("w", dtFloat, []int64{2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})),
			gNode(nodePB("Add", "a", []string{"x", "w"}, []string{"h"})),
			gNode(nodePB("Softmax", "", []string{"h"}, []string{"y"}, attrI("axis", 1))),
			gOut(vi("y", dtFloat, "batch", 2)))),
		modelPB(9, graphPB("g",
			gIn(vi("x", dtFloat, 1, 1, 2, 2)),
			gNode(nodePB("Upsample", "u", []string{"x", "s"}, []string{"y"})),
			gInit(f32Tensor("s", []int64{4}, 1, 1, 2, 2)),
			gOut(vi("y", dtFloat, 1, 1, 4, 4)))),
		modelPB(16, graphPB("g",
			gIn(vi("n", dtInt64)), gIn(vi("a", dtFloat, 1)),
			gInit(f32Tensor("w", []int64{1}, 0.5)),
			gNode(nodePB("Loop", "loop", []string{"n", "", "a"}, []string{"out"}, attrG("body", body))),
			gOut(vi("out", dtFloat, 1)))),
		modelPB(11, graphPB("g",
			gIn(vi("x", dtFloat, 2, 3)),
			gNode(nodePB("Constant", "k", nil, []string{"k"}, attrIs("value_ints", 1))),
			gNode(nodePB("ReduceSum", "r", []string{"x"}, []string{"y"}, attrIs("axes", 1))),
			gNode(nodePB("Split", "s", []string{"x"}, []string{"p", "", "q"}, attrI("axis", 1))),
			gOut(vi("y", dtFloat, 2)), gOut(vi("k", dtInt64, 1)), gOut(vi("q", dtFloat, 2, 1)))),
		modelPB(6, graphPB("g",
			gIn(vi("a", dtFloat, 2, 3, 4)), gIn(vi("b", dtFloat, 2)),
			gNode(nodePB("Add", "", []string{"a", "b"}, []string{"h"}, attrI("broadcast", 1), attrI("axis", 0))),
			gNode(nodePB("PRelu", "", []string{"h", "b"}, []string{"y"})),
			gOut(vi("y", dtFloat, 2, 3, 4)))),
		pb("\x08\x07\x12\x00"),
		pb("\xff\xff\xff"),
	}
}

func tensorSeeds() []pb {
	return []pb{
		f32Tensor("x", []int64{2}, 1, 2),
		i64Tensor("i", []int64{1, 2}, -1, 5),
		rawTensor("r", dtUint16, []int64{2}, []byte{1, 2, 3, 4}),
		tensorPB("b", dtBool, 3).packedVarints(5, 1, 0, 1),
		tensorPB("h", dtFloat16, 1).packedVarints(5, 0x3c00),
		tensorPB("d", dtDouble, 1).packedF64(10, 2),
		tensorPB("u", dtUint64, 1).packedVarints(11, 7),
		pb("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x10\x01"),
		pb("\x0a"),
	}
}

// TestWriteFuzzSeeds regenerates testdata/fuzz/*/seed-* from the seeds above
// when WEFT_WRITE_SEEDS=1 (findings of real fuzzing runs are kept beside them).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("WEFT_WRITE_SEEDS") != "1" {
		t.Skip("set WEFT_WRITE_SEEDS=1 to rewrite the seed corpus")
	}
	write := func(name string, seeds []pb) {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(s)) + ")\n"
			p := filepath.Join(dir, fmt.Sprintf("seed-%02d", i))
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("FuzzParse", parseSeeds())
	write("FuzzReadTensor", tensorSeeds())
}
