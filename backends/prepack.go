package backends

import "github.com/weftrt/weft/plan"

// Prepacker is an optional Device interface for devices whose kernels
// rearrange constants (pack weight panels, reorder blocks) when a partition
// compiles. Such a device can hand the rearranged bytes to the plan writer,
// which stores them in the .wplan file (plan.Prepacked), and take them back
// when the plan is opened, so that opening a plan does not pack again and
// the packed copy is read from the file mapping instead of living on the
// heap.
//
// A blob is keyed by its constant (plan.Prepacked.Value) and a packing
// descriptor (plan.Prepacked.Desc) that the device defines: it names
// everything the layout depends on (instruction-set level, panel
// parameters, shapes). A device must validate every blob it is offered —
// descriptor and length at least — and pack again, never fail and never
// compute a wrong answer, when a blob does not fit (a plan written on a
// machine with another instruction set, a blob of a foreign version).
type Prepacker interface {
	// ExportPrepacked returns the blobs the device's kernels for partition
	// part of p would pack, in any order (the writer sorts them). It may
	// compile the partition to find out. Data may alias memory that the
	// device keeps alive while p's constants are alive.
	ExportPrepacked(p *plan.Plan, part *plan.Partition) ([]plan.Prepacked, error)
	// OfferPrepacked makes blobs (read from p's plan file, this device's
	// only) available to the compilation of p's partitions that follows.
	// The caller calls done once those partitions are compiled; done
	// withdraws the offer and returns a note for people on what happened
	// (how many blobs were used as they are, how many were packed again
	// and why). Blobs used stay referenced by the compiled kernels, so the
	// file mapping must outlive them.
	OfferPrepacked(p *plan.Plan, blobs []plan.Prepacked) (done func() string)
}
