package metrics

import "sort"

// Counters is a set of named counters, each optionally per CPU. Output order is
// by name, then CPU (machine-wide first), never by map order.
type Counters struct {
	m map[key]int64
}

type key struct {
	name string
	cpu  int
}

// Sample is one counter value.
type Sample struct {
	Name  string
	CPU   int // -1 = machine-wide
	Value int64
}

// Add adds v to counter name on cpu (-1 for machine-wide).
func (c *Counters) Add(name string, cpu int, v int64) {
	if c.m == nil {
		c.m = make(map[key]int64)
	}
	c.m[key{name, cpu}] += v
}

// Max raises counter name on cpu to v if v is larger.
func (c *Counters) Max(name string, cpu int, v int64) {
	if c.m == nil {
		c.m = make(map[key]int64)
	}
	k := key{name, cpu}
	if cur, ok := c.m[k]; !ok || v > cur {
		c.m[k] = v
	}
}

// Get returns counter name on cpu.
func (c *Counters) Get(name string, cpu int) int64 { return c.m[key{name, cpu}] }

// Total sums counter name over every CPU and the machine-wide value.
func (c *Counters) Total(name string) int64 {
	var s int64
	for k, v := range c.m {
		if k.name == name {
			s += v
		}
	}
	return s
}

// Samples returns every counter in stable order.
func (c *Counters) Samples() []Sample {
	out := make([]Sample, 0, len(c.m))
	for k, v := range c.m {
		out = append(out, Sample{k.name, k.cpu, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].CPU < out[j].CPU
	})
	return out
}
