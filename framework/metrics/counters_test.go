package metrics

import (
	"fmt"
	"reflect"
	"testing"
)

func TestCounters(t *testing.T) {
	var c Counters
	c.Add("b", 1, 2)
	c.Add("a", -1, 1)
	c.Inc(Intern("b"), 0, 3)
	c.Add("b", 1, 5)
	c.Max("m", 2, 7)
	c.Max("m", 2, 4)
	c.MaxN(Intern("m"), 0, -3) // an unset counter takes a negative maximum
	if got := c.Get("b", 1); got != 7 {
		t.Errorf("Get(b, 1) = %d, want 7", got)
	}
	if got := c.Total("b"); got != 10 {
		t.Errorf("Total(b) = %d, want 10", got)
	}
	if got := c.Get("nothing", 3); got != 0 {
		t.Errorf("Get(nothing, 3) = %d, want 0", got)
	}
	want := []Sample{{"a", -1, 1}, {"b", 0, 3}, {"b", 1, 7}, {"m", 0, -3}, {"m", 2, 7}}
	if got := c.Samples(); !reflect.DeepEqual(got, want) {
		t.Errorf("Samples() = %v, want %v", got, want)
	}
}

func TestInternStable(t *testing.T) {
	a, b := Intern("x_stable"), Intern("x_stable")
	if a != b || a.String() != "x_stable" {
		t.Errorf("Intern(x_stable) = %d, %d (%q)", a, b, a.String())
	}
}

func TestDist(t *testing.T) {
	var d Dist
	for _, v := range []int64{5, 1, 300000, 499, 499} {
		d.Add(v)
	}
	if d.Count() != 5 || d.Max() != 300000 || d.Quantile(0.5) != 499 || d.Sum() != 301004 {
		t.Errorf("Count, Max, median, Sum = %d, %d, %d, %d", d.Count(), d.Max(), d.Quantile(0.5), d.Sum())
	}
}

// TestCountersBlock: a bound Block's slots are reported like cells (Get,
// Total, and Samples the written ones, in the same order), and a pair lives
// in one place only: counting a bound pair by name panics.
func TestCountersBlock(t *testing.T) {
	var c Counters
	var b Block
	x, y, z := Intern("blk_x"), Intern("blk_y"), Intern("blk_z")
	c.Inc(x, 0, 1) // a cell on cpu 0
	c.Bind(&b, 1, x, y, z)
	b.Add(0, 5)
	b.Add(1, 0) // written, though 0: reported
	b.Add(0, 2)
	b.Max(2, -4) // an unset slot takes a negative maximum
	b.Max(2, -9)
	if got := c.Get("blk_x", 1); got != 7 {
		t.Errorf("Get(blk_x, 1) = %d, want 7", got)
	}
	if got := c.Total("blk_x"); got != 8 {
		t.Errorf("Total(blk_x) = %d, want 8", got)
	}
	want := []Sample{{"blk_x", 0, 1}, {"blk_x", 1, 7}, {"blk_y", 1, 0}, {"blk_z", 1, -4}}
	if got := c.Samples(); !reflect.DeepEqual(got, want) {
		t.Errorf("Samples() = %v, want %v", got, want)
	}
	var fresh Block
	var d Counters
	d.Bind(&fresh, 0, x)
	if got := d.Samples(); len(got) != 0 {
		t.Errorf("an unwritten slot is reported: %v", got)
	}
	for name, f := range map[string]func(){
		"Cell of a bound pair": func() { c.Cell(x, 1) },
		"Inc of a bound pair":  func() { c.Inc(y, 1, 1) },
		"MaxN of a bound pair": func() { c.MaxN(z, 1, 1) },
		"Bind of a used pair":  func() { c.Bind(&Block{}, 0, x) },
		"Bind of a bound pair": func() { c.Bind(&Block{}, 1, y) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestCountersBlocksGet: Get finds each slot of several bound blocks (on
// the machine-wide row, CPU 0 and a later CPU), and a pair no block binds
// reads 0, also between bound CPUs and past them.
func TestCountersBlocksGet(t *testing.T) {
	var c Counters
	x, y, z := Intern("blkget_x"), Intern("blkget_y"), Intern("blkget_z")
	cpus := []int{-1, 0, 5}
	blocks := make([]Block, len(cpus))
	for bi, cpu := range cpus {
		c.Bind(&blocks[bi], cpu, x, y, z)
		for i := 0; i < 3; i++ {
			blocks[bi].Add(i, int64(100*bi+i+1))
		}
	}
	c.Bind(&Block{}, 2, y) // a block of one, its slot 0 another name's slot 1 elsewhere
	for bi, cpu := range cpus {
		for i, n := range []string{"blkget_x", "blkget_y", "blkget_z"} {
			if got, want := c.Get(n, cpu), int64(100*bi+i+1); got != want {
				t.Errorf("Get(%s, %d) = %d, want %d", n, cpu, got, want)
			}
		}
	}
	for _, p := range []struct {
		n   string
		cpu int
	}{{"blkget_x", 1}, {"blkget_x", 2}, {"blkget_y", 2}, {"blkget_z", 4}, {"blkget_z", 6}, {"blkget_z", 64}, {"blkget_w", 0}} {
		if got := c.Get(p.n, p.cpu); got != 0 {
			t.Errorf("Get(%s, %d) = %d, want 0", p.n, p.cpu, got)
		}
	}
	// A full block: its last slot is the one before the next block's first.
	var full []Name
	for i := 0; i < BlockCap; i++ {
		full = append(full, Intern(fmt.Sprintf("blkget_full%d", i)))
	}
	var fb Block
	c.Bind(&fb, 9, full...)
	c.Bind(&Block{}, 9, x)
	for i := range full {
		fb.Add(i, int64(1000+i))
	}
	for i := range full {
		if got := c.Get(full[i].String(), 9); got != int64(1000+i) {
			t.Errorf("Get(%s, 9) = %d, want %d", full[i], got, 1000+i)
		}
	}
	if got := c.Get("blkget_x", 9); got != 0 {
		t.Errorf("Get(blkget_x, 9) = %d, want 0 (the next block's unwritten slot)", got)
	}
	if got := c.Total("blkget_y"); got != 2+102+202 {
		t.Errorf("Total(blkget_y) = %d, want %d", got, 2+102+202)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("Bind of a pair twice in one call did not panic")
			}
		}()
		c.Bind(&Block{}, 7, z, z)
	}()
}
