// Package transfer holds the reference kernel of the scheduler's Transfer
// op (scheduler.OpTransfer, ir/ops.go): a copy of the input. On the CPU a
// transfer between host-visible buffers is never inserted; the kernel runs
// copies the scheduler placed on the CPU side of a boundary and serves as
// the oracle for backends that implement uploads and downloads.
//
// It must not know the scheduler or any other backend.
package transfer
