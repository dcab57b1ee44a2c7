package metrics

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
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
	// cells[name][cpu+1]; nil until the cell is first used (and for ever
	// for a bound Block's slot). Cells live in slabs that are never moved,
	// so a *Cell stays valid for the run.
	cells [][]*Cell
	slab  []Cell
	// bound[name][cpu+1] is a bound pair's slot, 1 + BlockCap*(its
	// block's index in blocks) + its index in the block; 0 (or past the
	// row) when the pair is not bound. Pointer-free, like a cells row's
	// index, where a map of pairs to blocks was 150 kB for 64 CPUs.
	// blocks lists the bound blocks in Bind order, for Samples and Total.
	bound  [][]int32
	blocks []boundBlock
}

type boundBlock struct {
	b     *Block
	cpu   int
	names []Name
}

// BlockCap is how many counters one Block holds.
const BlockCap = 23

// Block is up to BlockCap counters of one CPU side by side, 8 bytes each,
// after one word of written flags. A hot path that bumps a dozen counters
// per event embeds one next to its other state, where cells (carved from a
// slab in creation order, one pointer each to load) would spread the same
// counters apart. Counters reports a bound block's slots as it reports
// cells (Bind).
type Block struct {
	set uint64 // bit i: slot i was written (only written counters are reported)
	v   [BlockCap]int64
}

// Add adds v to slot i.
func (b *Block) Add(i int, v int64) {
	b.v[i] += v
	b.set |= 1 << uint(i)
}

// Max raises slot i to v if v is larger (or the slot is unset).
func (b *Block) Max(i int, v int64) {
	if b.set&(1<<uint(i)) == 0 || v > b.v[i] {
		b.v[i] = v
	}
	b.set |= 1 << uint(i)
}

// Value is slot i's count.
func (b *Block) Value(i int) int64 { return b.v[i] }

// Bind makes slot i of b counter names[i] on cpu (-1 machine-wide) for
// Samples, Get and Total. The block is the only way to count them: every
// pair must be new to c (no cell, no other slot), or Bind panics, and Cell,
// Inc and MaxN panic on a bound pair. b must stay valid as long as c.
func (c *Counters) Bind(b *Block, cpu int, names ...Name) {
	if len(names) > BlockCap {
		panic(fmt.Sprintf("metrics: Bind of %d counters, a Block holds %d", len(names), BlockCap))
	}
	bi := len(c.blocks)
	for i, n := range names {
		if c.boundSlot(n, cpu) != 0 || c.lookup(n, cpu) != nil {
			panic(fmt.Sprintf("metrics: Bind of counter %s on cpu %d, which is already in use", n, cpu))
		}
		r, j := int(n), cpu+1
		if r >= len(c.bound) {
			c.bound = append(c.bound, make([][]int32, r+1-len(c.bound))...)
		}
		if j >= len(c.bound[r]) {
			c.bound[r] = append(c.bound[r], make([]int32, j+1-len(c.bound[r]))...)
		}
		c.bound[r][j] = int32(1 + BlockCap*bi + i)
	}
	c.blocks = append(c.blocks, boundBlock{b, cpu, append([]Name(nil), names...)})
}

// boundSlot is (n, cpu)'s entry in bound, 0 when the pair is not bound.
func (c *Counters) boundSlot(n Name, cpu int) int32 {
	if i, j := uint(n), uint(cpu+1); i < uint(len(c.bound)) {
		if row := c.bound[i]; j < uint(len(row)) {
			return row[j]
		}
	}
	return 0
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
	if p := c.lookup(n, cpu); p != nil {
		return p
	}
	return c.newCell(n, cpu)
}

// lookup is the existing cell of (n, cpu), nil if none.
func (c *Counters) lookup(n Name, cpu int) *Cell {
	if i, j := uint(n), uint(cpu+1); i < uint(len(c.cells)) {
		if row := c.cells[i]; j < uint(len(row)) {
			return row[j]
		}
	}
	return nil
}

// newCell is the slow path of Cell: the row grows and the cell is carved
// from the current slab.
func (c *Counters) newCell(n Name, cpu int) *Cell {
	if c.boundSlot(n, cpu) != 0 {
		panic(fmt.Sprintf("metrics: counter %s on cpu %d is a Block's slot, not a cell", n, cpu))
	}
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
	n := Intern(name)
	if p := c.lookup(n, cpu); p != nil {
		return p.v
	}
	if s := c.boundSlot(n, cpu); s != 0 {
		return c.blocks[(s-1)/BlockCap].b.v[(s-1)%BlockCap]
	}
	return 0
}

// Total sums counter name over every CPU and the machine-wide value.
func (c *Counters) Total(name string) int64 {
	n := Intern(name)
	var s int64
	if int(n) < len(c.cells) {
		for _, x := range c.cells[n] {
			if x != nil {
				s += x.v
			}
		}
	}
	for _, bb := range c.blocks {
		for i, bn := range bb.names {
			if bn == n {
				s += bb.b.v[i]
			}
		}
	}
	return s
}

// Samples returns every counter ever written, in stable order.
func (c *Counters) Samples() []Sample {
	n := 0
	for _, row := range c.cells {
		for _, x := range row {
			if x != nil && x.set {
				n++
			}
		}
	}
	for _, bb := range c.blocks {
		n += bits.OnesCount64(bb.b.set & (1<<len(bb.names) - 1))
	}
	out := make([]Sample, 0, n)
	for i, row := range c.cells {
		name := Name(i).String()
		for j, x := range row {
			if x != nil && x.set {
				out = append(out, Sample{name, j - 1, x.v})
			}
		}
	}
	for _, bb := range c.blocks {
		for i, n := range bb.names {
			if bb.b.set&(1<<uint(i)) != 0 {
				out = append(out, Sample{n.String(), bb.cpu, bb.b.v[i]})
			}
		}
	}
	// A name and CPU are one cell or one slot: no two samples tie.
	slices.SortFunc(out, func(a, b Sample) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.CPU, b.CPU)
	})
	return out
}
