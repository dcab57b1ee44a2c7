package sim

import (
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// The two tiers of Queue: near, a 4-ary min-heap (heap4), and far, a sorted
// ring; both hold entries, an event next to its key.

// entry is one tier slot: an event and its key.
type entry struct {
	at  ktime.Time
	seq uint64
	e   *Event
}

// arity is the near heap's fan-out.
const arity = 4

// less orders entries by (at, seq).
func (a *entry) less(b *entry) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// lessBit is less as 1 or 0 without a branch: the borrow of the 128-bit
// subtraction (at, seq) - (b.at, b.seq), at's sign bit flipped so that it
// orders as unsigned. Picking a heap node's smallest child with it is
// arithmetic, not three unpredictable branches per level.
func (a *entry) lessBit(b *entry) uint64 {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.at)^1<<63, uint64(b.at)^1<<63, borrow)
	return borrow
}

// heap4 is a 4-ary min-heap of entries; each entry's event knows its index.
type heap4 []entry

// push adds ent, whose event's far already names this heap.
func (h *heap4) push(ent entry) {
	ent.e.index = len(*h)
	*h = append(*h, ent)
	h.up(ent.e.index)
}

// removeAt removes the entry at i, whose event's index is already reset.
func (h *heap4) removeAt(i int) {
	s := *h
	last := len(s) - 1
	if i != last {
		s[i] = s[last]
		s[i].e.index = i
	}
	s[last] = entry{}
	*h = s[:last]
	if i != last {
		h.fix(i)
	}
}

// popRoot removes the root, whose event's index is already reset.
func (h *heap4) popRoot() {
	s := *h
	last := len(s) - 1
	x := s[last]
	s[last] = entry{}
	*h = s[:last]
	if last > 0 {
		s[0] = x
		x.e.index = 0
		h.down(0)
	}
}

func (h heap4) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// up moves the entry at j, whose event's index is already j, towards the
// root while it is smaller than its parent (shifting parents down into the
// hole, writing it once at the end). An entry already in place (most
// pushes: a later time than its parent's) is neither copied nor written.
func (h heap4) up(j int) {
	if j <= 0 || !h[j].less(&h[int(uint(j-1)/arity)]) {
		return
	}
	x := h[j]
	for j > 0 {
		i := int(uint(j-1) / arity)
		if !x.less(&h[i]) {
			break
		}
		h[j] = h[i]
		h[j].e.index = j
		j = i
	}
	h[j] = x
	x.e.index = j
}

// down moves the entry at i0 towards the leaves while a child is smaller
// (shifting children up into the hole, writing it once at the end); it
// reports whether the entry moved. Of four children it picks the smallest
// by a tournament of conditional moves (lessBit), not three unpredictable
// branches.
func (h heap4) down(i0 int) bool {
	n := len(h)
	x := h[i0]
	i := i0
	for c := arity*i + 1; c < n; c = arity*i + 1 {
		m := c // the smallest child
		if c+arity <= n {
			k := h[c : c+arity : c+arity]
			a := int(k[1].lessBit(&k[0]))
			b := 2 + int(k[3].lessBit(&k[2]))
			m += a ^ (a^b)&-int(k[b&3].lessBit(&k[a&3]))
		} else {
			for k := c + 1; k < n; k++ {
				if h[k].less(&h[m]) {
					m = k
				}
			}
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		h[i].e.index = i
		i = m
	}
	if i == i0 {
		return false
	}
	h[i] = x
	x.e.index = i
	return true
}

// ring is the far tier: its heads sorted by key in buf, the earliest
// first, each event's index its slot in base (buf is base[lo:lo+len(buf)]).
// Far events are mostly sleeping CPUs' device interrupts, each armed later
// than every other CPU's (a machine of periodic sleepers wakes them in
// turn): their place is found from the back, a step or two, and the
// earliest leaves the front without the sift through every sleeper's event
// that a heap's root removal costs. An event armed out of that order shifts
// every head after its place: O(n) at worst, where a heap is O(log n).
type ring struct {
	buf  []entry
	base []entry
	lo   int
}

// insert adds ent, whose event's far is set and which is in no tier, at its
// place, shifting the later heads (found from the back) up a slot.
func (r *ring) insert(ent entry) {
	hi := r.lo + len(r.buf)
	if hi == len(r.base) {
		r.makeRoom()
		hi = len(r.buf)
	}
	b := r.base
	p := hi
	for p > r.lo && ent.less(&b[p-1]) {
		b[p] = b[p-1]
		b[p].e.index = p
		p--
	}
	b[p] = ent
	ent.e.index = p
	r.buf = b[r.lo : hi+1]
}

// makeRoom makes room at the back: it moves the heads to the start of base,
// or of a new one eight times their number when they fill more than an
// eighth of it (amortized, an index write per seven insertions, each a
// likely cache miss: the heads' events are other CPUs'). The firing event
// at the front keeps its index, -1.
func (r *ring) makeRoom() {
	n := len(r.buf)
	b := r.base
	if 8*n > len(b) || len(b) == 0 {
		b = make([]entry, max(8*n, 16))
		copy(b, r.buf)
	} else {
		copy(b, r.buf)
		clear(b[n : r.lo+n])
	}
	for p := range n {
		if e := b[p].e; e.index >= 0 {
			e.index = p
		}
	}
	r.base, r.buf, r.lo = b, b[:n], 0
}

// popFront removes the front (the firing event, whose index is already -1,
// or the head at slot lo).
func (r *ring) popFront() {
	r.base[r.lo] = entry{}
	r.lo++
	if r.buf = r.buf[1:]; len(r.buf) == 0 {
		r.lo, r.buf = 0, r.base[:0]
	}
}

// removeAt removes the head at slot i, whose event's index is already
// reset, shifting the later ones down a slot (the front just leaves).
func (r *ring) removeAt(i int) {
	if i == r.lo {
		r.popFront()
		return
	}
	b := r.base
	last := r.lo + len(r.buf) - 1
	for p := i; p < last; p++ {
		b[p] = b[p+1]
		b[p].e.index = p
	}
	b[last] = entry{}
	r.buf = r.buf[:len(r.buf)-1]
}

// move re-keys the head at slot i to ent (a new key for the same event)
// and shifts the heads between its old and new places by one.
func (r *ring) move(i int, ent entry) {
	b := r.base
	p := i
	if ent.less(&b[i]) {
		for p > r.lo && ent.less(&b[p-1]) {
			b[p] = b[p-1]
			b[p].e.index = p
			p--
		}
	} else {
		for hi := r.lo + len(r.buf); p+1 < hi && b[p+1].less(&ent); p++ {
			b[p] = b[p+1]
			b[p].e.index = p
		}
	}
	b[p] = ent
	ent.e.index = p
}
