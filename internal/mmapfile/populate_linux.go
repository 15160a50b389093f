package mmapfile

import "golang.org/x/sys/unix"

const madvPopulateRead = unix.MADV_POPULATE_READ
