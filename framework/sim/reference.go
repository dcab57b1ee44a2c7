package sim

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// RefQueue is the reference event queue: the order Queue promises, and
// nothing else. Events fire by (time, sequence number), the number taken
// from a counter at every Schedule, so events of one instant fire in the
// order they were scheduled; it is a plain 4-ary min-heap of events, with
// none of Queue's tiers, chains, in-place re-keying of the firing event or
// watchdog. The differential fuzz tests (reference_test.go) drive both with
// the same schedules, moves, cancels and steps run in place and require the
// same firing order: read this one to know what Queue does, and Queue to
// know how it does it cheaply.
//
// It uses an Event's index (its heap slot, -1 when not queued), at and seq,
// so Event.Queued and Event.When answer for it as for Queue. An event is in
// one queue at a time.
type RefQueue struct {
	heap []*Event
	seq  uint64
	now  ktime.Time
	pops uint64
}

// Schedule queues e at time at, or moves it there if it is already queued,
// with a new sequence number. Scheduling in the past panics.
func (q *RefQueue) Schedule(e *Event, at ktime.Time) {
	if at < q.now {
		panic(fmt.Sprintf("sim: event %q scheduled in the past: at=%v now=%v", e.Name, at, q.now))
	}
	q.seq++
	e.at, e.seq = at, q.seq
	if e.index >= 0 {
		q.fix(e.index)
		return
	}
	e.index = len(q.heap)
	q.heap = append(q.heap, e)
	q.up(e.index)
}

// Cancel removes e from the queue if it is queued.
func (q *RefQueue) Cancel(e *Event) {
	if e.index >= 0 {
		q.removeAt(e.index)
	}
}

// Now is the time of the event being fired, or of the last one fired.
func (q *RefQueue) Now() ktime.Time { return q.now }

// Pops is the number of events fired so far.
func (q *RefQueue) Pops() uint64 { return q.pops }

// Len is the number of queued events.
func (q *RefQueue) Len() int { return len(q.heap) }

// Peek returns the time of the earliest event, or ktime.Max when the queue
// is empty.
func (q *RefQueue) Peek() ktime.Time {
	if len(q.heap) == 0 {
		return ktime.Max
	}
	return q.heap[0].at
}

// Step fires the earliest event if it is due no later than limit, and
// reports whether one fired. The event leaves the queue before its handler
// runs: the handler may schedule it again.
func (q *RefQueue) Step(limit ktime.Time) bool {
	if len(q.heap) == 0 || q.heap[0].at > limit {
		return false
	}
	e := q.heap[0]
	q.removeAt(0)
	q.now = e.at
	q.pops++
	e.h.Fire(e.at)
	return true
}

// RunUntil fires events in order until the queue is empty or the next event
// is later than limit; then the clock stands at limit (if limit is finite).
func (q *RefQueue) RunUntil(limit ktime.Time) {
	for q.Step(limit) {
	}
	if limit != ktime.Max && limit > q.now {
		q.now = limit
	}
}

func refLess(a, b *Event) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// removeAt takes the event at slot i out of the heap.
func (q *RefQueue) removeAt(i int) {
	h := q.heap
	last := len(h) - 1
	h[i].index = -1
	if i != last {
		h[i] = h[last]
		h[i].index = i
	}
	h[last] = nil
	q.heap = h[:last]
	if i != last {
		q.fix(i)
	}
}

// fix restores the heap order around slot i after its key changed.
func (q *RefQueue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q *RefQueue) up(j int) {
	h := q.heap
	for j > 0 {
		i := (j - 1) / arity
		if !refLess(h[j], h[i]) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

// down moves the event at i0 towards the leaves while a child is earlier,
// and reports whether it moved.
func (q *RefQueue) down(i0 int) bool {
	h := q.heap
	i := i0
	for {
		m := i
		for c := arity*i + 1; c <= arity*i+arity && c < len(h); c++ {
			if refLess(h[c], h[m]) {
				m = c
			}
		}
		if m == i {
			return i != i0
		}
		q.swap(i, m)
		i = m
	}
}

func (q *RefQueue) swap(i, j int) {
	h := q.heap
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
