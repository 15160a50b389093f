package vulkan

import (
	"os"
	"sync"

	"github.com/weftrt/weft/backends"
)

// BackendName is the registry name of this backend.
const BackendName = "vulkan"

func init() { backends.Register(theBackend) }

var theBackend = &backend{}

// backend lists the Vulkan devices of this machine. Devices are probed
// once per process, on first use, and live as long as the process (tests
// share one device).
type backend struct {
	once   sync.Once
	devs   []backends.Device
	reason string
}

func (*backend) Name() string { return BackendName }

// Devices never fails: a machine without Vulkan (or a binary built without
// cgo) has no Vulkan devices, and Unavailable says why.
func (b *backend) Devices() ([]backends.Device, error) {
	b.once.Do(func() { b.devs, b.reason = probe(os.Getenv) })
	return b.devs, nil
}

// Unavailable says why the backend offers no devices, and also lists
// devices it skipped; it is "" when every device is usable.
func Unavailable() string {
	theBackend.Devices()
	return theBackend.reason
}
