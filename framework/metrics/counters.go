package metrics

import (
	"sort"
	"sync"
)

// Name is an interned counter name. Interning once (usually in a package-level
// variable) keeps the hot path to two slice indexes instead of a string hash.
type Name int32

var names = struct {
	sync.RWMutex
	ids  map[string]Name
	strs []string
}{ids: map[string]Name{}}

// Intern returns the Name for s; the same string always gives the same Name.
// Safe for concurrent use.
func Intern(s string) Name {
	names.RLock()
	id, ok := names.ids[s]
	names.RUnlock()
	if ok {
		return id
	}
	names.Lock()
	defer names.Unlock()
	if id, ok := names.ids[s]; ok {
		return id
	}
	id = Name(len(names.strs))
	names.ids[s] = id
	names.strs = append(names.strs, s)
	return id
}

// String returns the name's text.
func (n Name) String() string {
	names.RLock()
	defer names.RUnlock()
	return names.strs[n]
}

// Counters is a set of named counters, each optionally per CPU. Output order is
// by name, then CPU (machine-wide first), never by map order. The zero value is
// ready to use; a Counters is not safe for concurrent use.
type Counters struct {
	// vals[name][cpu+1]; set marks the cells ever written.
	vals [][]int64
	set  [][]bool
}

// Sample is one counter value.
type Sample struct {
	Name  string
	CPU   int // -1 = machine-wide
	Value int64
}

func (c *Counters) cell(n Name, cpu int) (*int64, *bool) {
	i, j := int(n), cpu+1
	if i >= len(c.vals) {
		c.vals = append(c.vals, make([][]int64, i+1-len(c.vals))...)
		c.set = append(c.set, make([][]bool, i+1-len(c.set))...)
	}
	if j >= len(c.vals[i]) {
		grow := j + 1 - len(c.vals[i])
		c.vals[i] = append(c.vals[i], make([]int64, grow)...)
		c.set[i] = append(c.set[i], make([]bool, grow)...)
	}
	return &c.vals[i][j], &c.set[i][j]
}

// Inc adds v to counter n on cpu (-1 for machine-wide).
func (c *Counters) Inc(n Name, cpu int, v int64) {
	p, s := c.cell(n, cpu)
	*p += v
	*s = true
}

// MaxN raises counter n on cpu to v if v is larger (or the counter is unset).
func (c *Counters) MaxN(n Name, cpu int, v int64) {
	p, s := c.cell(n, cpu)
	if !*s || v > *p {
		*p = v
	}
	*s = true
}

// Add adds v to counter name on cpu (-1 for machine-wide).
func (c *Counters) Add(name string, cpu int, v int64) { c.Inc(Intern(name), cpu, v) }

// Max raises counter name on cpu to v if v is larger.
func (c *Counters) Max(name string, cpu int, v int64) { c.MaxN(Intern(name), cpu, v) }

// Get returns counter name on cpu.
func (c *Counters) Get(name string, cpu int) int64 {
	i, j := int(Intern(name)), cpu+1
	if i < len(c.vals) && j < len(c.vals[i]) {
		return c.vals[i][j]
	}
	return 0
}

// Total sums counter name over every CPU and the machine-wide value.
func (c *Counters) Total(name string) int64 {
	i := int(Intern(name))
	if i >= len(c.vals) {
		return 0
	}
	var s int64
	for _, v := range c.vals[i] {
		s += v
	}
	return s
}

// Samples returns every counter ever written, in stable order.
func (c *Counters) Samples() []Sample {
	var out []Sample
	for i, row := range c.vals {
		name := Name(i).String()
		for j, v := range row {
			if c.set[i][j] {
				out = append(out, Sample{name, j - 1, v})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].CPU < out[j].CPU
	})
	return out
}
