package plan_test

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// rssFile returns the resident file-backed memory of this process in bytes
// (Linux), or -1.
func rssFile() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// TestOpenDoesNotTouchWeights opens a plan with 64 MiB of weights (four
// 16 MiB constants) and checks
// that the resident file-backed memory grows only by the pages that are
// touched: barely at Open, by the whole weights section once VerifyWeights
// reads it.
func TestOpenDoesNotTouchWeights(t *testing.T) {
	if runtime.GOOS != "linux" || rssFile() < 0 {
		t.Skip("needs /proc/self/status RssFile")
	}
	const mib = 1 << 20
	path := filepath.Join(t.TempDir(), "big.wplan")
	func() {
		b := ir.NewBuilder("big")
		x := b.Input("x", ir.Float32, ir.S(16*mib/4))
		y := x
		for i := 0; i < 4; i++ {
			y = b.Op("Add", y, b.Const("c"+strconv.Itoa(i), ir.NewTensor(ir.Float32, []int64{16 * mib / 4})))
		}
		b.Output("y", y)
		g, err := b.Build()
		require.NoError(t, err)
		p := &plan.Plan{Graph: g, Partitions: []*plan.Partition{{Device: "cpu", Nodes: g.Nodes}}}
		require.NoError(t, plan.WriteFile(path, p, nil))
	}()
	runtime.GC()

	before := rssFile()
	f, err := plan.Open(path)
	require.NoError(t, err)
	defer f.Close()
	afterOpen := rssFile()
	require.GreaterOrEqual(t, f.WeightBytes, int64(64*mib))
	require.Less(t, afterOpen-before, int64(4*mib), "Open made %d bytes of the file resident", afterOpen-before)

	require.NoError(t, f.VerifyWeights())
	afterVerify := rssFile()
	require.Greater(t, afterVerify-before, int64(60*mib), "reading the weights should have made them resident")
}
