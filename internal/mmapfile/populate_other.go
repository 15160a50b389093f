//go:build unix && !linux

package mmapfile

// madvPopulateRead is MADV_WILLNEED where there is no MADV_POPULATE_READ.
const madvPopulateRead = 3
