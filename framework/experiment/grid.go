package experiment

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/config"
)

// Grid is the set of runs of an experiment: every variant at every sweep
// point for every seed. It is the one place that numbers the cells, hands
// them out and splits them into shards; Compare, the encoders and merge all
// go through it.
//
// Cells are numbered variant-major, then point, then seed: the cell of
// Variants[v] at Points()[p] with Seeds[s] is Index(v, p, s). Without sweeps
// there is one point and the numbering is the variant-major one of a plain
// comparison.
type Grid struct {
	Variants []string
	Sweeps   []config.Sweep
	Seeds    []uint64
	points   []config.Point
}

// NewGrid makes the grid of variants x the sweeps' points x seeds.
func NewGrid(variants []string, sweeps []config.Sweep, seeds []uint64) Grid {
	return Grid{Variants: variants, Sweeps: sweeps, Seeds: seeds, points: config.Points(sweeps)}
}

// Cell is one run of a grid.
type Cell struct {
	Variant string
	Point   config.Point
	Seed    uint64
	// V, P and S index Variants, Points() and Seeds; PointIndex is the
	// point as config.Options.Point.
	V, P, S    int
	PointIndex []int
}

// Points returns the sweep points, the first sweep varying slowest; one
// empty point without sweeps.
func (g Grid) Points() []config.Point {
	if g.points == nil {
		return config.Points(g.Sweeps)
	}
	return g.points
}

// Len is the number of cells.
func (g Grid) Len() int { return len(g.Variants) * len(g.Points()) * len(g.Seeds) }

// Index numbers the cell (v, p, s).
func (g Grid) Index(v, p, s int) int { return (v*len(g.Points())+p)*len(g.Seeds) + s }

// Cell returns cell i.
func (g Grid) Cell(i int) Cell {
	ns, np := len(g.Seeds), len(g.Points())
	s, p, v := i%ns, i/ns%np, i/(ns*np)
	c := Cell{Variant: g.Variants[v], Point: g.Points()[p], Seed: g.Seeds[s], V: v, P: p, S: s}
	if len(g.Sweeps) > 0 {
		c.PointIndex = config.PointIndex(g.Sweeps, p)
	}
	return c
}

// Order lists the cells in the order runs are handed out: seed by seed,
// within a seed point by point and variant by variant, so that the variants
// progress together and a comparison cut short has matching seeds.
func (g Grid) Order() []int {
	out := make([]int, 0, g.Len())
	for s := range g.Seeds {
		for p := range g.Points() {
			for v := range g.Variants {
				out = append(out, g.Index(v, p, s))
			}
		}
	}
	return out
}

// Shard returns the cells of shard i of n (1 <= i <= n): every n-th cell of
// Order, starting at its (i-1)-th, so that each shard gets a share of every
// variant and point (runs of one variant or point can cost far more than
// another's) and the shards together hold every cell once.
func (g Grid) Shard(i, n int) ([]int, error) {
	if n < 1 || i < 1 || i > n {
		return nil, fmt.Errorf("shard %d/%d: want 1 <= I <= N", i, n)
	}
	var out []int
	for k, c := range g.Order() {
		if k%n == i-1 {
			out = append(out, c)
		}
	}
	return out, nil
}

// Label names cell c for messages: "variant V seed S", with the point.
func (g Grid) Label(c Cell) string {
	s := fmt.Sprintf("variant %s seed %d", c.Variant, c.Seed)
	if c.Variant == "" {
		s = fmt.Sprintf("seed %d", c.Seed)
	}
	if len(c.Point) > 0 {
		s = c.Point.Key() + " " + s
	}
	return s
}
