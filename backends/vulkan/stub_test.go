//go:build !cgo

package vulkan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStubHasNoDevices(t *testing.T) {
	devs, err := theBackend.Devices()
	require.NoError(t, err)
	require.Empty(t, devs)
	require.Equal(t, "vulkan: built without cgo", Unavailable())
}
