package vulkan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The pipeline cache file sits beside a compiled plan: FILE.wplan.vkcache
// for device vulkan:0, FILE.wplan.vulkanN.vkcache for vulkan:N (CachePath).
// It is weft's header followed by the bytes of vkGetPipelineCacheData:
//
//	offset  size  field
//	0       8     magic "WEFTVKPC"
//	8       4     format version (1), little-endian like every field
//	12      4     vendorID
//	16      4     deviceID
//	20      4     driverVersion
//	24      16    pipelineCacheUUID
//	40      8     data length in bytes
//	48      4     CRC-32 (IEEE) of the data
//	52      -     the data: Vulkan's own header (length, version 1,
//	              vendorID, deviceID, pipelineCacheUUID), then the driver's
//
// A file is used only when both headers name this device (vendor, device,
// driver version, UUID) and the data is whole; anything else is ignored
// with a note saying why, and the next save replaces it.

const (
	cacheMagic   = "WEFTVKPC"
	cacheVersion = 1
	cacheHeader  = 52
)

// cacheIdentity is what a cache file must match.
type cacheIdentity struct {
	vendor, device, driver uint32
	uuid                   [16]byte
}

// CachePath returns the pipeline cache file of device dev (a "vulkan:N"
// name) for the plan at planPath.
func CachePath(planPath, dev string) string {
	var n int
	if _, err := fmt.Sscanf(dev, "vulkan:%d", &n); err != nil || n == 0 {
		return planPath + ".vkcache"
	}
	return fmt.Sprintf("%s.vulkan%d.vkcache", planPath, n)
}

// encodeCache wraps a pipeline cache's data in weft's header.
func encodeCache(id cacheIdentity, data []byte) []byte {
	out := make([]byte, cacheHeader, cacheHeader+len(data))
	copy(out, cacheMagic)
	le := binary.LittleEndian
	le.PutUint32(out[8:], cacheVersion)
	le.PutUint32(out[12:], id.vendor)
	le.PutUint32(out[16:], id.device)
	le.PutUint32(out[20:], id.driver)
	copy(out[24:40], id.uuid[:])
	le.PutUint64(out[40:], uint64(len(data)))
	le.PutUint32(out[48:], crc32.ChecksumIEEE(data))
	return append(out, data...)
}

// decodeCache returns the pipeline cache data of a file made for id, or
// an error saying why the file does not fit (the caller turns it into a
// note: a stale cache is never fatal).
func decodeCache(id cacheIdentity, file []byte) ([]byte, error) {
	le := binary.LittleEndian
	if len(file) < cacheHeader || string(file[:8]) != cacheMagic {
		return nil, fmt.Errorf("not a weft pipeline cache")
	}
	if v := le.Uint32(file[8:]); v != cacheVersion {
		return nil, fmt.Errorf("format version %d, want %d", v, cacheVersion)
	}
	var got cacheIdentity
	got.vendor, got.device, got.driver = le.Uint32(file[12:]), le.Uint32(file[16:]), le.Uint32(file[20:])
	copy(got.uuid[:], file[24:40])
	if got != id {
		return nil, fmt.Errorf("made for vendor 0x%x device 0x%x driver 0x%x cache UUID %x; this device is vendor 0x%x device 0x%x driver 0x%x cache UUID %x",
			got.vendor, got.device, got.driver, got.uuid, id.vendor, id.device, id.driver, id.uuid)
	}
	n := le.Uint64(file[40:])
	data := file[cacheHeader:]
	if uint64(len(data)) != n {
		return nil, fmt.Errorf("truncated: %d bytes of data, the header says %d", len(data), n)
	}
	if crc32.ChecksumIEEE(data) != le.Uint32(file[48:]) {
		return nil, fmt.Errorf("checksum mismatch")
	}
	// Vulkan's own header (VkPipelineCacheHeaderVersionOne), checked too:
	// a driver would silently ignore a foreign blob, weft says so.
	if len(data) < 32 {
		return nil, fmt.Errorf("the Vulkan cache data has %d bytes, less than its header", len(data))
	}
	if hs, hv := le.Uint32(data[0:]), le.Uint32(data[4:]); hs < 32 || hv != 1 {
		return nil, fmt.Errorf("a Vulkan cache header of %d bytes, version %d (want ≥ 32, 1)", hs, hv)
	}
	if le.Uint32(data[8:]) != id.vendor || le.Uint32(data[12:]) != id.device || !bytes.Equal(data[16:32], id.uuid[:]) {
		return nil, fmt.Errorf("the Vulkan cache header names another device")
	}
	return data, nil
}
