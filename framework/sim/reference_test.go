package sim

import (
	"fmt"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// evQueue is what the differential test drives in Queue and RefQueue alike.
type evQueue interface {
	Schedule(e *Event, at ktime.Time)
	Cancel(e *Event)
	Step(limit ktime.Time) bool
	RunUntil(limit ktime.Time)
	Peek() ktime.Time
	Len() int
	Now() ktime.Time
	Pops() uint64
}

// fired is one event's firing as the differential test logs it, with what
// the queue reported at that moment.
type fired struct {
	event  int
	at     ktime.Time
	pops   uint64
	len    int
	peek   ktime.Time
	queued uint16 // bit i: event i queued
}

// diffWorld runs one queue under the op stream: its events' handlers
// schedule, move and cancel events and run steps in place as the kernel's
// do (FireNext, FireAfter: the handler's last act, or a Schedule for the
// same time when the queue says no).
type diffWorld struct {
	q         evQueue
	fireNext  func(e *Event, at ktime.Time) bool // nil: never in place
	fireAfter func(e *Event, at ktime.Time) bool
	events    [diffEvents]*Event
	ops       []byte
	pos       int
	log       []fired
}

const (
	diffEvents = 12
	diffFires  = 300
)

func (w *diffWorld) next() (byte, byte) {
	a, b := w.ops[w.pos%len(w.ops)], w.ops[(w.pos+1)%len(w.ops)]
	w.pos += 2
	return a, b
}

func (w *diffWorld) fire(i int, now ktime.Time) {
	rec := fired{event: i, at: now, pops: w.q.Pops(), len: w.q.Len(), peek: w.q.Peek()}
	for j, e := range w.events {
		if e.Queued() {
			rec.queued |= 1 << j
		}
	}
	w.log = append(w.log, rec)
	if len(w.log) >= diffFires {
		return
	}
	for range 3 {
		op, v := w.next()
		j := int(v) % diffEvents
		switch op % 6 {
		case 0: // re-arm itself
			w.q.Schedule(w.events[i], now+ktime.Time(v%16))
		case 1: // schedule or move another
			w.q.Schedule(w.events[j], now+ktime.Time(v/16))
		case 2: // cancel another (or itself: a no-op)
			w.q.Cancel(w.events[j])
		case 3: // its own next step, in place if nothing comes first
			at := now + ktime.Time(v%8)
			if w.fireNext != nil && w.fireNext(w.events[i], at) {
				w.fire(i, at)
			} else {
				w.q.Schedule(w.events[i], at)
			}
			return
		case 4: // another's step, in place if nothing comes first
			at := now + ktime.Time(v/8%4)
			if w.fireAfter != nil && w.fireAfter(w.events[j], at) {
				w.fire(j, at)
			} else {
				w.q.Schedule(w.events[j], at)
			}
			return
		case 5: // many events at one instant (CPUs in lockstep): chains
			for k := range int(v % 4) {
				w.q.Schedule(w.events[(j+k)%diffEvents], now+ktime.Time(op/64))
			}
		}
	}
}

// run schedules every event and fires them to the end, by Step or by
// RunUntil (with a finite limit first, then none), as ops[1] says.
func (w *diffWorld) run() {
	for i := range w.events {
		w.events[i] = NewEvent(fmt.Sprintf("e%d", i), func(now ktime.Time) { w.fire(i, now) })
	}
	for i := range w.events {
		_, v := w.next()
		w.q.Schedule(w.events[i], ktime.Time(v%32))
	}
	switch w.ops[1] % 3 {
	case 0:
		for w.q.Step(ktime.Max) {
		}
	case 1:
		w.q.RunUntil(ktime.Time(w.ops[1]))
		w.q.RunUntil(ktime.Max)
	default:
		w.q.RunUntil(ktime.Max)
	}
}

// FuzzQueueMatchesReference drives the tiered Queue and the plain RefQueue
// with the same op stream, its handlers re-arming, moving and cancelling
// events, running steps in place (Queue's FireNext and FireAfter; RefQueue
// schedules instead) and crowding events at one instant, with the near span
// and the re-keying threshold picked by the first byte: every firing (which
// event, when, and the Pops, Len, Peek and Queued seen then) must be the
// same in both.
func FuzzQueueMatchesReference(f *testing.F) {
	f.Add([]byte{0, 5, 1, 3, 2, 7, 0, 0, 3, 1, 1, 9})
	f.Add([]byte{1, 0, 1, 0, 1, 0, 2, 2, 3, 3, 0, 255})
	f.Add([]byte{3, 200, 3, 2, 3, 5, 1, 9, 3, 0, 2, 7, 3, 1, 0, 3})
	f.Add([]byte{21, 4, 5, 200, 5, 13, 4, 10, 4, 2, 1, 3, 4, 28})
	f.Add([]byte{7, 1, 5, 67, 5, 131, 0, 3, 5, 195, 3, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) < 2 {
			return
		}
		var q Queue
		q.nearSpan = ktime.Time(ops[0]%16) + 1 // both tiers in use
		if ops[0]&16 != 0 {
			q.bigRekey = smallHeap // every re-arm looks for a chain to join
		}
		tiered := &diffWorld{q: &q, fireNext: q.FireNext, fireAfter: q.FireAfter, ops: ops}
		ref := &diffWorld{q: &RefQueue{}, ops: ops}
		tiered.run()
		ref.run()
		for i := range max(len(tiered.log), len(ref.log)) {
			if i >= len(tiered.log) || i >= len(ref.log) || tiered.log[i] != ref.log[i] {
				t.Fatalf("firing %d differs:\n tiered %+v\n ref    %+v", i, at(tiered.log, i), at(ref.log, i))
			}
		}
		if q.Len() != 0 && len(tiered.log) < diffFires {
			t.Fatalf("Queue holds %d events after running to the end", q.Len())
		}
	})
}

func at(log []fired, i int) any {
	if i < len(log) {
		return log[i]
	}
	return "(none)"
}

// TestRefQueueOrder pins the reference's own rule: time, then scheduling
// order; a move takes a new number; a cancelled event does not fire.
func TestRefQueueOrder(t *testing.T) {
	var q RefQueue
	var got []string
	add := func(name string, at ktime.Time) *Event {
		e := NewEvent(name, func(ktime.Time) { got = append(got, name) })
		q.Schedule(e, at)
		return e
	}
	a := add("a", 10)
	add("b", 10)
	add("c", 5)
	gone := add("gone", 7)
	q.Cancel(gone)
	q.Schedule(a, 10) // a new number: after b
	q.RunUntil(ktime.Max)
	if fmt.Sprint(got) != "[c b a]" || q.Len() != 0 || q.Pops() != 3 || gone.Queued() {
		t.Errorf("fired %v, Len %d, Pops %d; want [c b a], 0, 3", got, q.Len(), q.Pops())
	}
}
