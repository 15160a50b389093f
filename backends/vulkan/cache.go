//go:build cgo

package vulkan

/*
#include "vk.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"
)

// The device's VkPipelineCache, kept in a file beside a compiled plan
// (cachefile.go has the format). The runtime's caller (weft.OpenPlan)
// loads it before the partitions compile and saves it after, through
// backends.CacheFiler; a second open of the plan then finds every pipeline
// in the cache and skips the driver's shader compilation.

// identity is what this device's cache files must match.
func (d *device) identity() cacheIdentity {
	return cacheIdentity{vendor: d.info.VendorID, device: d.info.DeviceID, driver: d.info.DriverVersion, uuid: d.uuid}
}

// LoadCache merges the pipeline cache file of the plan at planPath into the
// device's pipeline cache and says what happened: loaded (how many bytes),
// absent, or ignored and why (another device or driver, a damaged file).
// A cache that does not fit is never an error.
func (d *device) LoadCache(planPath string) string {
	d.pmu.Lock()
	d.cacheLoaded = 0
	d.pmu.Unlock()
	note := d.loadCache(planPath)
	d.pmu.Lock()
	d.cacheNote = note
	d.pmu.Unlock()
	return note
}

func (d *device) loadCache(planPath string) string {
	path := CachePath(planPath, d.name)
	file, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("%s: no pipeline cache %s yet", d.name, path)
	}
	if err != nil {
		return fmt.Sprintf("%s: pipeline cache ignored: %v", d.name, err)
	}
	data, err := decodeCache(d.identity(), file)
	if err != nil {
		return fmt.Sprintf("%s: pipeline cache %s ignored: %v", d.name, path, err)
	}
	d.pmu.Lock()
	defer d.pmu.Unlock()
	if d.closed {
		return d.errClosed().Error()
	}
	var c C.VkPipelineCache
	r := C.wv_pipeline_cache(d.h, unsafe.Pointer(&data[0]), C.size_t(len(data)), &c)
	if err := check("vkCreatePipelineCache", r); err != nil {
		return fmt.Sprintf("%s: pipeline cache %s ignored: %v", d.name, path, err)
	}
	defer C.wv_destroy_cache(d.h, c)
	if err := check("vkMergePipelineCaches", C.wv_merge_cache(d.h, d.cache, c)); err != nil {
		return fmt.Sprintf("%s: pipeline cache %s ignored: %v", d.name, path, err)
	}
	d.cacheLoaded = len(data)
	return fmt.Sprintf("%s: loaded %d bytes of pipeline cache from %s", d.name, len(data), path)
}

// cacheData returns the device's pipeline cache data.
func (d *device) cacheData() ([]byte, error) {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	if d.closed {
		return nil, d.errClosed()
	}
	var n C.size_t
	if err := check("vkGetPipelineCacheData", C.wv_pipeline_cache_data(d.h, d.cache, &n, nil)); err != nil {
		return nil, err
	}
	data := make([]byte, int(n))
	if n > 0 {
		r := C.wv_pipeline_cache_data(d.h, d.cache, &n, unsafe.Pointer(&data[0]))
		if err := check("vkGetPipelineCacheData", r); err != nil {
			return nil, err
		}
	}
	return data[:int(n)], nil
}

// SaveCache writes the device's pipeline cache beside the plan at planPath
// (CachePath), unless the file already holds exactly that. The file is
// replaced atomically (a temporary file renamed over it).
func (d *device) SaveCache(planPath string) error {
	data, err := d.cacheData()
	if err != nil {
		return fmt.Errorf("%s: save pipeline cache: %w", d.name, err)
	}
	if len(data) == 0 {
		return nil // the driver keeps no cache
	}
	path := CachePath(planPath, d.name)
	enc := encodeCache(d.identity(), data)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, enc) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: save pipeline cache: %w", d.name, err)
	}
	_, werr := tmp.Write(enc)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: save pipeline cache %s: %w", d.name, path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: save pipeline cache %s: %w", d.name, path, err)
	}
	return nil
}

// PipelineCache reports, for a Vulkan device, how many bytes of pipeline
// cache its last LoadCache merged (0: none) and that call's note; ok is
// false for devices of other backends.
func PipelineCache(dev any) (loaded int, note string, ok bool) {
	d, ok := dev.(*device)
	if !ok {
		return 0, "", false
	}
	d.pmu.Lock()
	defer d.pmu.Unlock()
	return d.cacheLoaded, d.cacheNote, true
}
