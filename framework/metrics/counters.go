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
	// cells[name][cpu+1]; nil until the cell is first used. Cells live in
	// slabs that are never moved, so a *Cell stays valid for the run.
	cells [][]*Cell
	slab  []Cell
}

// Cell is one counter on one CPU. A hot path resolves it once (Counters.Cell)
// and adds to it directly instead of looking the name and CPU up each time.
type Cell struct {
	v   int64
	set bool // ever written: only written cells are Samples
}

// Add adds v to the counter.
func (p *Cell) Add(v int64) {
	p.v += v
	p.set = true
}

// Max raises the counter to v if v is larger (or the counter is unset).
func (p *Cell) Max(v int64) {
	if !p.set || v > p.v {
		p.v = v
	}
	p.set = true
}

// Sample is one counter value.
type Sample struct {
	Name  string
	CPU   int // -1 = machine-wide
	Value int64
}

// slabCells is how many cells one allocation holds.
const slabCells = 256

// Cell returns counter n's cell on cpu (-1 for machine-wide), creating it
// unset; the pointer stays valid as long as c. A cell that is never written
// is not reported.
func (c *Counters) Cell(n Name, cpu int) *Cell {
	if i, j := uint(n), uint(cpu+1); i < uint(len(c.cells)) {
		if row := c.cells[i]; j < uint(len(row)) && row[j] != nil {
			return row[j]
		}
	}
	return c.newCell(n, cpu)
}

// newCell is the slow path of Cell: the row grows and the cell is carved
// from the current slab.
func (c *Counters) newCell(n Name, cpu int) *Cell {
	i, j := int(n), cpu+1
	if i >= len(c.cells) {
		c.cells = append(c.cells, make([][]*Cell, i+1-len(c.cells))...)
	}
	if j >= len(c.cells[i]) {
		c.cells[i] = append(c.cells[i], make([]*Cell, j+1-len(c.cells[i]))...)
	}
	if c.cells[i][j] == nil {
		if len(c.slab) == 0 {
			c.slab = make([]Cell, slabCells)
		}
		c.cells[i][j], c.slab = &c.slab[0], c.slab[1:]
	}
	return c.cells[i][j]
}

// Inc adds v to counter n on cpu (-1 for machine-wide).
func (c *Counters) Inc(n Name, cpu int, v int64) { c.Cell(n, cpu).Add(v) }

// MaxN raises counter n on cpu to v if v is larger (or the counter is unset).
func (c *Counters) MaxN(n Name, cpu int, v int64) { c.Cell(n, cpu).Max(v) }

// Add adds v to counter name on cpu (-1 for machine-wide).
func (c *Counters) Add(name string, cpu int, v int64) { c.Inc(Intern(name), cpu, v) }

// Max raises counter name on cpu to v if v is larger.
func (c *Counters) Max(name string, cpu int, v int64) { c.MaxN(Intern(name), cpu, v) }

// Get returns counter name on cpu.
func (c *Counters) Get(name string, cpu int) int64 {
	i, j := int(Intern(name)), cpu+1
	if i < len(c.cells) && j < len(c.cells[i]) && c.cells[i][j] != nil {
		return c.cells[i][j].v
	}
	return 0
}

// Total sums counter name over every CPU and the machine-wide value.
func (c *Counters) Total(name string) int64 {
	i := int(Intern(name))
	if i >= len(c.cells) {
		return 0
	}
	var s int64
	for _, x := range c.cells[i] {
		if x != nil {
			s += x.v
		}
	}
	return s
}

// Samples returns every counter ever written, in stable order.
func (c *Counters) Samples() []Sample {
	var out []Sample
	for i, row := range c.cells {
		name := Name(i).String()
		for j, x := range row {
			if x != nil && x.set {
				out = append(out, Sample{name, j - 1, x.v})
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
