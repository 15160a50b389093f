package backends

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// Kind classifies devices for the scheduler and for people.
type Kind int

// Device kinds.
const (
	CPU Kind = iota
	GPU
)

func (k Kind) String() string {
	if k == GPU {
		return "gpu"
	}
	return "cpu"
}

// Backend is a family of devices (the CPU, Vulkan, OpenCL).
type Backend interface {
	// Name is the registry name ("cpu", "vulkan", ...).
	Name() string
	// Devices lists the devices this backend can drive on this machine; it
	// may be empty (no driver, not built with the right tag).
	Devices() ([]Device, error)
}

// Device executes partitions.
type Device interface {
	// Name is unique across all backends, e.g. "cpu" or "vulkan:0".
	Name() string
	Kind() Kind
	// HostVisible reports whether the device's buffers are plain host
	// memory, so that data moves to and from the CPU without copies.
	HostVisible() bool
	// Supports answers the capability question for one node: nil, or an
	// error wrapping ir.ErrUnsupported that says why not.
	Supports(n *ir.Node) error
	// Alloc allocates a device buffer of n bytes.
	Alloc(n int) (Buffer, error)
	// Compile prepares a partition for repeated execution.
	Compile(p *plan.Partition) (Executable, error)
}

// Buffer is device memory.
type Buffer interface {
	Size() int
	// Host returns the bytes of a host-visible buffer, nil otherwise.
	Host() []byte
	Free()
}

// Executable is a compiled partition. Run must be safe for concurrent use
// with distinct Envs.
type Executable interface {
	// Run reads the partition's inputs from env and stores its outputs there.
	Run(ctx context.Context, env *Env) error
}

var (
	regMu    sync.RWMutex
	registry = map[string]Backend{}
)

// Register makes a backend available by name. It panics on a duplicate name,
// as a program wiring two backends under one name is a programming error.
func Register(b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[b.Name()]; dup {
		panic(fmt.Sprintf("backends: Register called twice for %q", b.Name()))
	}
	registry[b.Name()] = b
}

// Get returns a registered backend.
func Get(name string) (Backend, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	b, ok := registry[name]
	return b, ok
}

// Names lists the registered backends, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AllDevices returns the devices of every registered backend, in backend-name order.
func AllDevices() ([]Device, error) {
	var devs []Device
	for _, name := range Names() {
		b, _ := Get(name)
		ds, err := b.Devices()
		if err != nil {
			return nil, fmt.Errorf("backends: %s: %w", name, err)
		}
		devs = append(devs, ds...)
	}
	return devs, nil
}
