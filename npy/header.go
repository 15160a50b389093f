package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// header is the content of the Python dict literal in an .npy header.
type header struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseHeader parses the dict literal
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// accepting any key order, either quote style, extra whitespace and
// trailing commas. Unknown keys are an error, as in NumPy.
func parseHeader(s string) (header, error) {
	p := &lit{s: s}
	var h header
	seen := map[string]bool{}
	if !p.eat('{') {
		return h, errors.New("want '{'")
	}
	for {
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return h, fmt.Errorf("dict key: %w", err)
		}
		if !p.eat(':') {
			return h, fmt.Errorf("want ':' after %q", key)
		}
		if seen[key] {
			return h, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("descr: %w (structured dtypes are not supported)", err)
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return h, fmt.Errorf("fortran_order: %w", err)
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, fmt.Errorf("shape: %w", err)
			}
		default:
			return h, fmt.Errorf("unexpected key %q", key)
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return h, errors.New("want ',' or '}'")
			}
			break
		}
	}
	if rest := strings.TrimSpace(p.s[p.i:]); rest != "" {
		return h, fmt.Errorf("trailing text %q", rest)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("missing key %q", k)
		}
	}
	return h, nil
}

// lit is a cursor over a Python literal.
type lit struct {
	s string
	i int
}

func (p *lit) skip() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// eat consumes c (after whitespace) if it comes next.
func (p *lit) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str parses a quoted string without escapes (dtype descrs and keys have none).
func (p *lit) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", errors.New("escapes in strings are not supported")
	}
	p.i += end + 2
	return v, nil
}

func (p *lit) boolean() (bool, error) {
	p.skip()
	for _, w := range []struct {
		s string
		v bool
	}{{"True", true}, {"False", false}} {
		if strings.HasPrefix(p.s[p.i:], w.s) {
			p.i += len(w.s)
			return w.v, nil
		}
	}
	return false, errors.New("want True or False")
}

// tuple parses a tuple of non-negative integers: (), (3,), (2, 3).
func (p *lit) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, errors.New("want '('")
	}
	dims := []int64{}
	for {
		if p.eat(')') {
			return dims, nil
		}
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, errors.New("want a non-negative integer")
		}
		d, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dimension %q: out of range", p.s[p.i:j])
		}
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long suffix
			p.i++
		}
		dims = append(dims, d)
		if !p.eat(',') {
			if !p.eat(')') {
				return nil, errors.New("want ',' or ')'")
			}
			return dims, nil
		}
	}
}
