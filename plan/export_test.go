package plan

import (
	"encoding/binary"
	"hash/crc32"
)

// Restamp recomputes every checksum of a plan file in place (sections and
// header), so tests and the fuzzer can reach the decoders with crafted
// contents. Files too short or with a malformed table are left as they are.
func Restamp(data []byte) {
	if len(data) < headerSize {
		return
	}
	le := binary.LittleEndian
	n := int(le.Uint32(data[12:]))
	if n > maxSections || headerSize+n*entrySize > len(data) {
		return
	}
	table := data[headerSize : headerSize+n*entrySize]
	for i := 0; i < n; i++ {
		ent := table[i*entrySize:]
		off, length := le.Uint64(ent[8:]), le.Uint64(ent[16:])
		if off <= uint64(len(data)) && length <= uint64(len(data))-off {
			le.PutUint32(ent[24:], crc32.Checksum(data[off:off+length], castagnoli))
		}
	}
	le.PutUint32(data[24:], headerCRC(data[:headerSize], table))
}

// SectionRange returns the offset and length of the section of the given
// kind in a well-formed plan file.
func SectionRange(data []byte, kind uint32) (off, length int) {
	le := binary.LittleEndian
	n := int(le.Uint32(data[12:]))
	for i := 0; i < n; i++ {
		ent := data[headerSize+i*entrySize:]
		if le.Uint32(ent) == kind {
			return int(le.Uint64(ent[8:])), int(le.Uint64(ent[16:]))
		}
	}
	return -1, 0
}
