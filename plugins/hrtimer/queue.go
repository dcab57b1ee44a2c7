package hrtimer

import (
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// timer models struct hrtimer (include/linux/hrtimer_types.h) as far as the
// core sees it. The host owns the identity (ID); the plugin owns everything
// else. A timer value is recycled once it is inactive, no longer running and no
// longer referenced by any cpu_base next pointer (see reclaim).
type timer struct {
	id sdk.TimerID
	// cpu and base locate timer->base: the cpu_base and the clock base index
	// (0..3 hard MONOTONIC, REALTIME, BOOTTIME, TAI; 4..7 the soft ones).
	cpu  int
	base int
	soft bool // is_soft: base >= 4

	// softexpires and expires are _softexpires and node.expires, in the
	// base's clock: the timer may run once basenow >= softexpires; the queue
	// and the hardware use expires (= softexpires + slack).
	softexpires, expires ktime.Time

	enqueued bool   // HRTIMER_STATE_ENQUEUED
	seq      uint64 // enqueue order: equal expiries keep FIFO order, as timerqueue_add() does
	idx      int    // position in its base's heap, -1 when not queued

	cbCost int64 // declared callback cost, ns
	period int64 // declared hrtimer_forward_now() interval, 0 = HRTIMER_NORESTART

	// runEnd is when the last callback run returns. While a later call's now
	// is before it, the timer is base->running (hrtimer_callback_running()).
	runEnd ktime.Time

	refs      int  // cpu_base next_timer/softirq_next_timer pointers to this timer
	candidate bool // queued in its cpu's reclaim list
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
	t.idx = len(q.h)
	q.h = append(q.h, t)
	q.up(t.idx)
	return t.idx == 0
}

// remove erases t and reports whether the queue still has timers
// (timerqueue_del()'s return).
func (q *timerQueue) remove(t *timer) bool {
	i := t.idx
	last := len(q.h) - 1
	if i < 0 || i > last || q.h[i] != t {
		panic("hrtimer: timerQueue.remove of a timer that is not in this queue")
	}
	if i != last {
		q.swap(i, last)
	}
	q.h[last] = nil
	q.h = q.h[:last]
	t.idx = -1
	if i != last {
		if !q.down(i) {
			q.up(i)
		}
	}
	return len(q.h) > 0
}

func (q *timerQueue) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].idx = i
	q.h[j].idx = j
}

func (q *timerQueue) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !less(q.h[j], q.h[i]) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

func (q *timerQueue) down(i0 int) bool {
	i, n := i0, len(q.h)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && less(q.h[r], q.h[j]) {
			j = r
		}
		if !less(q.h[j], q.h[i]) {
			break
		}
		q.swap(i, j)
		i = j
	}
	return i > i0
}
