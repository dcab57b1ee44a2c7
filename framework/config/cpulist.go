package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxCPUs is the largest machine tickemu emulates (machine.cpus). It is also the
// bound ParseCPUList checks CPU numbers against when the machine size is unknown.
const MaxCPUs = 4096

// ParseCPUList parses a CPU list in the kernel's cpulist format ("0-3,8",
// "10-13,20", "0-15:2/4") into sorted, distinct CPU numbers below MaxCPUs.
//
// It follows lib/bitmap-str.c:bitmap_parselist() (as of v6.15): regions are
// separated by commas or whitespace (leading and repeated separators are fine, an
// empty string is an empty list); a region is N, A-B or A-B:USED/GROUP, where
// the optional pattern sets the first USED CPUs of every GROUP-sized group
// starting at A. The tokens "N" (the last CPU) and "all" need the machine size,
// so they are rejected here; use ParseCPUListFor.
func ParseCPUList(s string) ([]int, error) {
	return parseCPUList(s, MaxCPUs, false)
}

// ParseCPUListFor is ParseCPUList for a machine of nrCPUs CPUs: numbers must be
// below nrCPUs (-ERANGE in the kernel), "N" stands for the last CPU (nrCPUs-1)
// and "all" for 0-N, as bitmap_parselist() allows.
func ParseCPUListFor(s string, nrCPUs int) ([]int, error) {
	if nrCPUs < 1 || nrCPUs > MaxCPUs {
		return nil, fmt.Errorf("%w: machine size %d is outside 1..%d", ErrCPUListRange, nrCPUs, MaxCPUs)
	}
	return parseCPUList(s, nrCPUs, true)
}

// FormatCPUList formats CPU numbers in the kernel's list format, as printk's
// "%*pbl" does (lib/vsprintf.c:bitmap_list_string()): ascending, duplicates
// dropped, runs of two or more CPUs written "A-B". Negative numbers are skipped.
func FormatCPUList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		if c[i] < 0 {
			i++
			continue
		}
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// cpuRegion models struct region in lib/bitmap-str.c: CPUs start..end, of which
// the first off of every groupLen are set.
type cpuRegion struct {
	start, off, groupLen, end int
}

// cpuListParser walks one cpulist string.
type cpuListParser struct {
	s       string
	i       int
	nbits   int
	dynamic bool // "N" and "all" are allowed (the machine size is known)
}

// parseCPUList models lib/bitmap-str.c:bitmap_parselist() for a mask of nbits.
//
// Divergence: the kernel stops at the first newline (its input is a sysfs or
// command-line buffer); here a newline is one more whitespace separator, so a
// multi-line HCL string does not silently lose its tail. Arithmetic is done in
// int, so a huge GROUP cannot wrap the group walk the way a 32-bit unsigned
// start can in bitmap_set_region().
func parseCPUList(s string, nbits int, dynamic bool) ([]int, error) {
	p := cpuListParser{s: s, nbits: nbits, dynamic: dynamic}
	var mask []bool
	for {
		// bitmap_find_region(): skip separators; stop at the end.
		for p.i < len(s) && isRegionSep(s[p.i]) {
			p.i++
		}
		if p.i >= len(s) {
			break
		}
		r, err := p.region()
		if err != nil {
			return nil, err
		}
		if err := p.check(r); err != nil {
			return nil, err
		}
		if mask == nil {
			mask = make([]bool, nbits)
		}
		// bitmap_set_region()
		for start := r.start; start <= r.end; start += r.groupLen {
			n := min(r.end-start+1, r.off)
			for c := start; c < start+n; c++ {
				mask[c] = true
			}
		}
	}
	var cpus []int
	for c, set := range mask {
		if set {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// region models bitmap_parse_region().
func (p *cpuListParser) region() (cpuRegion, error) {
	var r cpuRegion
	lastbit := p.nbits - 1
	if len(p.s)-p.i >= 3 && strings.EqualFold(p.s[p.i:p.i+3], "all") {
		if !p.dynamic {
			return r, fmt.Errorf("%w %q: \"all\" needs the machine size; list the CPUs", ErrCPUListSyntax, p.s)
		}
		r.start, r.end = 0, lastbit
		p.i += 3
	} else {
		var err error
		if r.start, err = p.number(); err != nil {
			return r, err
		}
		if p.endOfRegion() {
			r.end = r.start
			r.off, r.groupLen = r.end+1, r.end+1
			return r, nil
		}
		if p.s[p.i] != '-' {
			return r, p.syntax("'-', ',' or the end of the list")
		}
		p.i++
		if r.end, err = p.number(); err != nil {
			return r, err
		}
	}
	if p.endOfRegion() {
		r.off, r.groupLen = r.end+1, r.end+1
		return r, nil
	}
	if p.s[p.i] != ':' {
		return r, p.syntax("':', ',' or the end of the list")
	}
	p.i++
	var err error
	if r.off, err = p.number(); err != nil {
		return r, err
	}
	if p.i >= len(p.s) || p.s[p.i] != '/' {
		return r, p.syntax("'/' (a pattern is USED/GROUP)")
	}
	p.i++
	r.groupLen, err = p.number()
	return r, err
}

// check models bitmap_check_region().
func (p *cpuListParser) check(r cpuRegion) error {
	switch {
	case r.start > r.end:
		return fmt.Errorf("%w %q: range %d-%d runs backwards", ErrCPUListSyntax, p.s, r.start, r.end)
	case r.groupLen == 0:
		return fmt.Errorf("%w %q: group size 0", ErrCPUListSyntax, p.s)
	case r.off > r.groupLen:
		return fmt.Errorf("%w %q: %d used CPUs do not fit in a group of %d", ErrCPUListSyntax, p.s, r.off, r.groupLen)
	case r.end >= p.nbits:
		return fmt.Errorf("%w: CPU %d in %q does not exist (CPUs are 0-%d)", ErrCPUListRange, r.end, p.s, p.nbits-1)
	}
	return nil
}

// number models bitmap_getnum(): "N" or an unsigned decimal that fits in 32 bits.
func (p *cpuListParser) number() (int, error) {
	if p.i < len(p.s) && p.s[p.i] == 'N' {
		if !p.dynamic {
			return 0, fmt.Errorf("%w %q: \"N\" needs the machine size; write the last CPU's number", ErrCPUListSyntax, p.s)
		}
		p.i++
		return p.nbits - 1, nil
	}
	start := p.i
	n := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		n = n*10 + int(p.s[p.i]-'0')
		if n > math.MaxUint32 {
			return 0, fmt.Errorf("%w: %q", ErrCPUListOverflow, p.s)
		}
		p.i++
	}
	if p.i == start {
		return 0, p.syntax("a CPU number")
	}
	return n, nil
}

func (p *cpuListParser) endOfRegion() bool {
	return p.i >= len(p.s) || isRegionSep(p.s[p.i])
}

func (p *cpuListParser) syntax(want string) error {
	at := "the end"
	if p.i < len(p.s) {
		at = strconv.Quote(p.s[p.i:])
	}
	return fmt.Errorf("%w %q: expected %s at %s", ErrCPUListSyntax, p.s, want, at)
}

// isRegionSep is the kernel's __end_of_region(): isspace() or a comma.
func isRegionSep(c byte) bool {
	switch c {
	case ',', ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
