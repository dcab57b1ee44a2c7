package hrtimer

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// timer models struct hrtimer (include/linux/hrtimer_types.h) as far as the
// core sees it. The host owns the identity (ID); the plugin owns everything
// else. A timer value is recycled once it is inactive, no longer running and no
// longer referenced by any cpu_base next pointer (see reclaim).
//
// Layout: everything Start, Cancel and the queue operations read or write is
// in the first 64 bytes (the queue's keys expires and seq first), the id the
// expiry reports in the second, and the record is 128 bytes, a size class
// whose objects start on a cache line: Start and Cancel touch one line of it,
// not the two a 72-byte record in the 80-byte class always straddled
// (TestTimerLayout).
type timer struct {
	// softexpires and expires are _softexpires and node.expires, in the
	// base's clock: the timer may run once basenow >= softexpires; the queue
	// and the hardware use expires (= softexpires + slack).
	expires     ktime.Time
	seq         uint64 // enqueue order: equal expiries keep FIFO order, as timerqueue_add() does
	softexpires ktime.Time

	// runEnd is when the last callback run returns. While a later call's now
	// is before it, the timer is base->running (hrtimer_callback_running()).
	runEnd ktime.Time

	cbCost int64 // declared callback cost, ns
	period int64 // declared hrtimer_forward_now() interval, 0 = HRTIMER_NORESTART

	idx int32 // position in its base's heap, -1 when not queued
	// cpu and base locate timer->base: the cpu_base and the clock base index
	// (0..3 hard MONOTONIC, REALTIME, BOOTTIME, TAI; 4..7 the soft ones).
	cpu       int32
	refs      int32 // cpu_base next_timer/softirq_next_timer pointers to this timer
	base      uint8
	soft      bool // is_soft: base >= 4
	enqueued  bool // HRTIMER_STATE_ENQUEUED
	candidate bool // queued in its cpu's reclaim list

	id sdk.TimerID

	_ [56]byte // to 128 bytes
}

// less orders a base's queue by expires, FIFO among equals (the rbtree
// inserts an equal key right of the existing ones).
func less(a, b *timer) bool {
	if a.expires != b.expires {
		return a.expires < b.expires
	}
	return a.seq < b.seq
}

// timerQueue models struct timerqueue_head: an ordered set with O(1) access to
// the leftmost node. It is a binary min-heap with each timer's index stored in
// the timer, so insert and erase are O(log n) and allocation-free once the
// backing array has grown.
//
// Divergence: the kernel uses an rbtree with a cached leftmost node; only
// first() and the in-order successor of first() (second()) are ever needed, and
// a heap answers both.
type timerQueue struct {
	h []*timer
}

func (q *timerQueue) len() int { return len(q.h) }

// first is timerqueue_getnext(): the timer with the earliest expires, or nil.
func (q *timerQueue) first() *timer {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

// second is timerqueue_iterate_next(first()): the in-order successor of the
// leftmost node, i.e. the smaller of the root's children.
func (q *timerQueue) second() *timer {
	switch len(q.h) {
	case 0, 1:
		return nil
	case 2:
		return q.h[1]
	}
	if less(q.h[2], q.h[1]) {
		return q.h[2]
	}
	return q.h[1]
}

// push inserts t and reports whether it became the leftmost timer
// (timerqueue_add()'s return).
func (q *timerQueue) push(t *timer) bool {
	h := append(q.h, t)
	q.h = h
	if len(h) == 2 {
		// A second timer, the common case (a CPU's tick timer and one
		// more): siftUp's one comparison in line.
		if p := h[0]; less(t, p) {
			h[0], h[1], p.idx, t.idx = t, p, 1, 0
			return true
		}
		t.idx = 1
		return false
	}
	return q.siftUp(len(h)-1, t) == 0
}

// remove erases t and reports whether the queue still has timers
// (timerqueue_del()'s return).
func (q *timerQueue) remove(t *timer) bool {
	h := q.h
	i, last := int(t.idx), len(h)-1
	if uint(i) > uint(last) || h[i] != t {
		removeMissing()
		return false // (never reached: nothing is live across the panic's call to be spilled)
	}
	t.idx = -1
	x := h[last]
	h[last] = nil
	q.h = h[:last]
	if i != last {
		// The last leaf fills the hole: it moves up past a larger parent
		// or down past a smaller child.
		if i > 0 && less(x, h[(i-1)/2]) {
			q.siftUp(i, x)
		} else {
			q.siftDown(i, x)
		}
	}
	return last > 0
}

// popFirst erases the first timer, remove(first()) on a non-empty queue,
// and reports whether the queue still has timers.
func (q *timerQueue) popFirst() bool {
	h := q.h
	last := len(h) - 1
	h[0].idx = -1
	x := h[last]
	h[last] = nil
	q.h = h[:last]
	switch {
	case last == 1:
		h[0], x.idx = x, 0 // the only other timer: siftDown with no child
	case last > 1:
		q.siftDown(0, x) // the last leaf fills the root's hole
	}
	return last > 0
}

//go:noinline
func removeMissing() {
	panic("hrtimer: timerQueue.remove of a timer that is not in this queue")
}

// siftUp places x, whose slot is the hole at j, moving larger parents down
// into the hole; it returns x's final index.
func (q *timerQueue) siftUp(j int, x *timer) int {
	h := q.h
	for j > 0 {
		i := (j - 1) / 2
		p := h[i]
		if !less(x, p) {
			break
		}
		h[j], p.idx = p, int32(j)
		j = i
	}
	h[j], x.idx = x, int32(j)
	return j
}

// siftDown places x at the hole i, moving smaller children up into it.
func (q *timerQueue) siftDown(i int, x *timer) {
	h := q.h
	n := len(h)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		c := h[j]
		if r := j + 1; r < n && less(h[r], c) {
			j, c = r, h[r]
		}
		if !less(c, x) {
			break
		}
		h[i], c.idx = c, int32(i)
		i = j
	}
	h[i], x.idx = x, int32(i)
}
