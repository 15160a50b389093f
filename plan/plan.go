package plan

import (
	"fmt"
	"strings"

	"github.com/weftrt/weft/ir"
)

// Plan is a scheduled graph: partitions in execution order.
type Plan struct {
	Graph      *ir.Graph
	Partitions []*Partition
	// Buffers lists every value that the plan materialises, in definition order.
	Buffers []Buffer
	// Arenas holds one arena per device that has planned buffers (empty
	// until memory planning has run).
	Arenas []Arena
}

// Arena is one contiguous, 64-byte aligned block of device memory from which
// planned buffers are carved.
type Arena struct {
	Device string
	Size   int64
}

// Partition is a run of nodes that one device executes back to back.
type Partition struct {
	Index  int
	Device string // device name, as backends.Device.Name reports it
	Nodes  []*ir.Node
	// Inputs are the values the partition reads that are defined outside it
	// (graph inputs, constants, other partitions' outputs); Outputs are the
	// values it defines that are read outside it or are graph outputs.
	Inputs  []*ir.Value
	Outputs []*ir.Value
	// Causes records why each node was placed on Device (same order as Nodes).
	Causes []string
}

// Buffer describes the storage one value needs.
type Buffer struct {
	Value  *ir.Value
	Device string
	// Bytes is the static size, or -1 when the shape is only known at run time.
	Bytes int64
	// Arena and Offset place the buffer in Arenas[Arena]; Offset is -1 when
	// the buffer is not planned (dynamic size, or owned elsewhere).
	Arena  int
	Offset int64
	// InPlaceOf, when set, is the input whose bytes this buffer overwrites in
	// place (same arena, offset and size; the input dies at this buffer's
	// producer). Verify allows exactly these overlaps.
	InPlaceOf *ir.Value
}

// Text renders the plan for people: one block per partition.
func (p *Plan) Text() string {
	var sb strings.Builder
	for _, part := range p.Partitions {
		fmt.Fprintf(&sb, "partition %d on %s: %d nodes, %d inputs, %d outputs\n",
			part.Index, part.Device, len(part.Nodes), len(part.Inputs), len(part.Outputs))
		for i, n := range part.Nodes {
			cause := ""
			if i < len(part.Causes) {
				cause = "  # " + part.Causes[i]
			}
			fmt.Fprintf(&sb, "  %s%s\n", n, cause)
		}
	}
	var static, dynamic int64
	for _, b := range p.Buffers {
		if b.Bytes >= 0 {
			static += b.Bytes
		} else {
			dynamic++
		}
	}
	fmt.Fprintf(&sb, "buffers: %d (%d bytes static, %d sized at run time)\n", len(p.Buffers), static, dynamic)
	return sb.String()
}
