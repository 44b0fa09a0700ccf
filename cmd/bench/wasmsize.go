package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
)

// wasmFuncSizes reads a WebAssembly module and returns the code bytes of each
// function by name (from the "name" custom section, which Go writes unless
// linked with -s), summed by package, plus the sizes of the code and data
// sections. `go tool nm` does not read wasm modules, so this is its
// equivalent for GOARCH=wasm: a function's body size is what it costs.
func wasmFuncSizes(name string) (pkgs []pkgSize, code, data int64, err error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, 0, 0, errors.New("not a wasm module")
	}
	r := &wreader{b: b, i: 8}
	var imported int
	var bodies []int64
	names := map[int]string{}
	for r.i < len(r.b) && r.err == nil {
		id := r.byte()
		size := int(r.uleb())
		end := r.i + size
		if end > len(r.b) {
			return nil, 0, 0, errors.New("truncated section")
		}
		sec := &wreader{b: r.b[:end], i: r.i}
		switch id {
		case 2: // imports
			for n := sec.uleb(); n > 0; n-- {
				sec.name()
				sec.name()
				kind := sec.byte()
				switch kind {
				case 0:
					sec.uleb()
					imported++
				case 1:
					sec.byte()
					sec.limits()
				case 2:
					sec.limits()
				case 3:
					sec.byte()
					sec.byte()
				}
			}
		case 10: // code
			code = int64(size)
			for n := sec.uleb(); n > 0; n-- {
				start := sec.i
				l := int(sec.uleb())
				sec.i += l
				bodies = append(bodies, int64(sec.i-start))
			}
		case 11:
			data = int64(size)
		case 0:
			if sec.name() == "name" {
				for sec.i < end && sec.err == nil {
					sub := sec.byte()
					l := int(sec.uleb())
					next := sec.i + l
					if sub == 1 {
						for n := sec.uleb(); n > 0; n-- {
							idx := int(sec.uleb())
							names[idx] = sec.name()
						}
					}
					sec.i = next
				}
			}
		}
		if sec.err != nil {
			return nil, 0, 0, sec.err
		}
		r.i = end
	}
	if len(names) == 0 {
		return nil, code, data, errors.New("the module has no name section (built with -s?)")
	}
	sum := map[string]int64{}
	for i, n := range bodies {
		fn := names[imported+i]
		if fn == "" {
			fn = "?"
		}
		sum[symPackage(fn)] += n
	}
	for k, v := range sum {
		pkgs = append(pkgs, pkgSize{k, v})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Bytes > pkgs[j].Bytes })
	return pkgs, code, data, nil
}

type wreader struct {
	b   []byte
	i   int
	err error
}

func (r *wreader) byte() byte {
	if r.i >= len(r.b) {
		r.err = fmt.Errorf("wasm: unexpected end at %d", r.i)
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *wreader) uleb() uint64 {
	if r.i >= len(r.b) {
		r.err = fmt.Errorf("wasm: unexpected end at %d", r.i)
		return 0
	}
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.err = fmt.Errorf("wasm: bad LEB128 at %d", r.i)
		return 0
	}
	r.i += n
	return v
}

func (r *wreader) name() string {
	l := int(r.uleb())
	if r.i+l > len(r.b) {
		r.err = fmt.Errorf("wasm: bad name at %d", r.i)
		return ""
	}
	s := string(r.b[r.i : r.i+l])
	r.i += l
	return s
}

func (r *wreader) limits() {
	if r.byte()&1 == 1 {
		r.uleb()
		r.uleb()
		return
	}
	r.uleb()
}
