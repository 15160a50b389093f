package weft_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
)

// Place and Profile reach the scheduler: rules are parsed, a profile is
// loaded, and bad ones are errors naming the problem.
func TestPlaceAndProfileOptions(t *testing.T) {
	g, _, _, _, _ := buildMLP(t)
	p, _, err := weft.Compile(g, weft.Options{OptLevel: 2, Place: []string{"*=cpu"}, Profile: "apple-m2"})
	require.NoError(t, err)
	for _, part := range p.Partitions {
		require.Equal(t, "cpu", part.Device)
		for _, c := range part.Causes {
			require.Equal(t, "pinned by the user (--place *=cpu)", c)
		}
	}

	devs, err := backends.AllDevices()
	require.NoError(t, err)
	_, err = weft.SchedulerOptions(devs, weft.Options{Place: []string{"MatMul"}})
	require.ErrorContains(t, err, "want OP=DEVICE")
	_, err = weft.SchedulerOptions(devs, weft.Options{Profile: "pixel-99"})
	require.ErrorContains(t, err, `no bundled profile "pixel-99"`)
	g, _, _, _, _ = buildMLP(t)
	_, _, err = weft.Compile(g, weft.Options{Place: []string{"MatMul=vulkan"}})
	require.ErrorContains(t, err, `names unknown device "vulkan"`)
}
