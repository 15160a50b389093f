//go:build linux

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// touchedFileBytes returns how many bytes of the file at path are
// resident in this process's mappings of it (the Rss of every mapping of
// that file in /proc/self/smaps): the weights a run actually touched, when
// the file is memory-mapped and read in place.
func touchedFileBytes(path string) (int64, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var total int64
	found, in := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header line
			in = len(fields) >= 6 && strings.Join(fields[5:], " ") == abs
			found = found || in
			continue
		}
		if in && fields[0] == "Rss:" && len(fields) >= 2 {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				total += kb << 10
			}
		}
	}
	return total, found && sc.Err() == nil
}
