package conform

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Test is one backend-test directory.
type Test struct {
	Suite string // base name of the directory argument it was found under
	Name  string // base name of the test directory
	Dir   string
}

// Discover finds the tests under each of dirs: a directory that holds
// model.onnx is one test; otherwise every immediate subdirectory holding
// model.onnx is a test, in name order. A directory with no test is an error.
func Discover(dirs ...string) ([]Test, error) {
	var tests []Test
	for _, dir := range dirs {
		clean := filepath.Clean(dir)
		suite := filepath.Base(clean)
		fi, err := os.Stat(clean)
		if err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("conform: %s is not a directory", dir)
		}
		if isTest(clean) {
			tests = append(tests, Test{Suite: suite, Name: suite, Dir: clean})
			continue
		}
		ents, err := os.ReadDir(clean)
		if err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
		n := 0
		for _, e := range ents { // ReadDir sorts by name
			p := filepath.Join(clean, e.Name())
			if e.IsDir() && isTest(p) {
				tests = append(tests, Test{Suite: suite, Name: e.Name(), Dir: p})
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("conform: %s holds no ONNX tests (no model.onnx in it or its subdirectories)", dir)
		}
	}
	return tests, nil
}

func isTest(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "model.onnx"))
	return err == nil && fi.Mode().IsRegular()
}

// dataSets returns the test_data_set_N directories of a test, by N.
func dataSets(dir string) ([]string, error) {
	return numbered(dir, "test_data_set_", "", true)
}

// numbered lists the entries of dir named prefix+N+suffix, indexed by N.
// Gaps are an error: ONNX numbers inputs, outputs and data sets from 0 without holes.
func numbered(dir, prefix, suffix string, wantDir bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byN := map[int]string{}
	max := -1
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() != wantDir || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
			continue
		}
		num := strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix)
		k, err := strconv.Atoi(num)
		if err != nil || k < 0 || k > 1<<20 {
			continue
		}
		byN[k] = filepath.Join(dir, name)
		if k > max {
			max = k
		}
	}
	out := make([]string, max+1)
	for k := range out {
		p, ok := byN[k]
		if !ok {
			return nil, fmt.Errorf("%s: %s%d%s is missing", dir, prefix, k, suffix)
		}
		out[k] = p
	}
	return out, nil
}
