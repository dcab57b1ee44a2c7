package sdk

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseCPUList parses a cpulist attribute of a machine with nrCPUs CPUs: CPU
// numbers and ranges separated by commas ("0-3,8,10-11"), as the kernel's
// cpulist format writes them, or "all" (and "", the attributes' usual
// default) for every CPU. The CPUs come in the order written, repeats kept:
// workloads hand them out round robin. Every CPU must exist.
func ParseCPUList(s string, nrCPUs int) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		out := make([]int, nrCPUs)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, ok := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad cpulist %q", s)
		}
		b := a
		if ok {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad cpulist %q", s)
			}
		}
		// Checked before the range is expanded ("0-999999999" is one
		// error, not a billion CPUs), naming its first missing CPU.
		if a < 0 || b >= nrCPUs {
			first := a
			if a >= 0 {
				first = max(a, nrCPUs)
			}
			return nil, fmt.Errorf("CPU %d in %q does not exist (machine has %d)", first, s, nrCPUs)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// CPUList returns a cpulist attribute (see ParseCPUList) of a machine with
// nrCPUs CPUs.
func (c Config) CPUList(name string, nrCPUs int) ([]int, error) {
	const want = "a cpulist"
	v, err := c.raw(name, want)
	if err != nil {
		return nil, err
	}
	cpus, perr := ParseCPUList(v, nrCPUs)
	if perr != nil {
		return nil, &ConfigError{Attribute: name, Value: v, Want: want, Err: perr}
	}
	return cpus, nil
}

// CPUList reads a cpulist attribute of a machine with nrCPUs CPUs; nil when
// it cannot.
func (r *ConfigReader) CPUList(name string, nrCPUs int) []int {
	v, err := r.c.CPUList(name, nrCPUs)
	r.note(err)
	return v
}
