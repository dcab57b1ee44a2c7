// Package sim is tickemu's discrete-event core: a queue of events ordered by
// (simulated time, sequence number) and seeded random streams. It has no goroutines
// and never reads the wall clock, so a run is a pure function of its inputs.
package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Event is one pending action. Owners allocate their events once and re-arm them
// with Queue.Schedule, as the kernel re-arms an embedded struct hrtimer; this keeps
// the hot path free of allocations. An owner may also hold its events by value
// (Init), next to the state their handler reads.
//
// Invariant: index is the event's slot in the tier far says (the queue's
// near heap or far ring) when it heads a chain, chained when it follows
// another event of the same time in one (prev, next), or -1 when it is not
// queued (also while it fires: see Queue.firing). Only Queue (or RefQueue,
// which uses index alone) writes the fields but Name.
type Event struct {
	h          Handler // called when the event is popped
	at         ktime.Time
	seq        uint64
	index      int
	prev, next *Event
	far        bool
	Name       string // for invariant panics and debugging only
}

// Handler is what an event calls when it fires. An owner that holds its
// events by value implements it on a named type of its own struct (type
// runHandler CPU): firing then calls the owner's method through a shared
// method table, with no closure object to read.
type Handler interface {
	Fire(now ktime.Time)
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(now ktime.Time)

// Fire calls f.
func (f HandlerFunc) Fire(now ktime.Time) { f(now) }

// chained is the index of a queued event that is not a tier entry but
// follows the head of its chain.
const chained = -2

// NewEvent returns an unqueued event that calls fire.
func NewEvent(name string, fire func(now ktime.Time)) *Event {
	return &Event{h: HandlerFunc(fire), Name: name, index: -1}
}

// Init makes e, which must not be queued, an unqueued event that calls h.
func (e *Event) Init(name string, h Handler) {
	*e = Event{h: h, Name: name, index: -1}
}

// Queued reports whether e is waiting in a queue.
func (e *Event) Queued() bool { return e.index != -1 }

// When returns the time e is queued for; only meaningful while Queued.
func (e *Event) When() ktime.Time { return e.at }

// Queue is a priority queue of events keyed by (at, seq). Events at the same
// instant fire in the order they were scheduled: seq is a global counter, so
// ties never depend on heap layout or map order.
//
// It has two tiers: near, a 4-ary min-heap, holds the events scheduled less
// than NearSpan ahead of the clock, far (a ring, sorted) the others. On a
// big machine most CPUs sleep with one device event far ahead while a few
// run chains of short steps (an activity, a task segment, the next); the
// steps churn a heap of a handful of entries instead of sifting through
// every sleeper's event. The sleepers' events arrive in the far ring about
// in the order they fire (each CPU arms its next wakeup later than the
// others'), so each goes in a slot or two from its back and leaves from its
// front, where a heap's root removal sifts through every sleeper's event. An
// event stays in the tier it was scheduled into until it fires, is moved
// or cancelled; the earliest event is the smaller of the two roots, so the
// split changes no order, only the cost.
//
// Events of one time form chains: an event scheduled for the time of the
// last event appended for that time (tails, by a hash of the time) follows
// it instead of entering a tier. Its sequence number is the largest so far,
// so a chain is in (time, sequence) order, and every newer event of that
// time joins the chain until another head for the time is created (tails
// only ever holds the newest); the head's key is the smallest of its
// chain and below every other tier entry's of that time, so when it fires,
// its successor takes its slot without a sift. CPUs stepping in lockstep
// (every CPU's interrupt at the same nanosecond) then cost O(1) per event
// instead of a sift past every other CPU's event of that instant.
//
// Each tier holds every event's key next to its pointer, so sifting and
// scanning compare without dereferencing events; the heap is 4-ary (half
// the levels of a binary heap). RefQueue is the same order without the
// tiers and chains: a plain heap the tests hold this one to. The event being fired stays at its tier's root until it returns
// (firing): most events re-arm themselves while they fire (a CPU's next
// activity, segment or device interrupt), and re-keying the near heap's
// root is one sift instead of a pop and a push.
type Queue struct {
	near heap4
	far  ring
	seq  uint64
	// tails[tailSlot(t)] is the last event appended for time t, if it is
	// still queued and still at t: where the next event for t is chained.
	tails [tailSlots]*Event
	// firing is the event being fired from the root of its tier (the near
	// heap's root, or the far ring's front when its far is set), logically
	// no longer queued (its index is -1) until it is scheduled again or
	// Step removes it. Every other entry's key is larger than the root's,
	// so nothing scheduled or cancelled meanwhile moves it. nil when no
	// event is firing from a root.
	firing *Event
	now    ktime.Time
	pops   uint64
	// stopped ends RunUntil after the event being fired (Stop).
	stopped bool
	// stepLimit is the limit of the Step in progress; bound, when boundSet,
	// is at most the time of every queued event but the firing one (so far
	// in its Step): what FireNext compares with. Schedule lowers bound
	// whether or not it is set: until it is set, it means nothing, and
	// setBound computes it afresh.
	stepLimit ktime.Time
	bound     ktime.Time
	boundSet  bool
	// nearSpan, when not zero, replaces NearSpan (tests exercise both tiers
	// with small times); bigRekey, when smallHeap, makes every re-arm of the
	// firing event look for a chain (tests exercise both paths).
	nearSpan ktime.Time
	bigRekey int
	// The progress watchdog: the events fired at now since the clock last
	// advanced are pops-instant (counted without a store per event); same
	// is that count once it nears the limit, and recent holds the names of
	// the last of them (nothing is recorded before that).
	instant uint64
	same    uint64
	limit   uint64
	warnAt  uint64 // same beyond it: nearLimit (limit - livelockWindow)
	recent  []string
	// poll, when set, is called by RunUntil every PollEvents events (the
	// host's wall-clock bound and interrupts); it may Stop the queue.
	poll func()
}

// NearSpan is how far ahead of the clock an event may be scheduled to go into
// the near heap: longer than a wakeup's chain of steps (idle exit, interrupt,
// switch, syscalls), shorter than a sleep or a tick.
const NearSpan = ktime.Time(20 * ktime.Microsecond)

// PollEvents is how often RunUntil calls the SetPoll function: about once a
// millisecond of wall time in process, often enough for a wall-clock bound
// and rarely enough to cost nothing (one mask test per event).
const PollEvents = 1 << 12

// SetPoll makes RunUntil call fn every PollEvents events; nil removes it.
// fn must not change the simulation, only stop it.
func (q *Queue) SetPoll(fn func()) { q.poll = fn }

// DefaultLivelockLimit is how many events may fire at one simulated instant
// before the watchdog ends the run. A legitimate instant holds a few events
// per CPU (a tick, its softirqs, a wakeup); a million means the simulation
// has stopped advancing time: a livelock, e.g. an interrupt that keeps
// re-raising itself at the same nanosecond. It takes well under a second.
const DefaultLivelockLimit = 1 << 20

// livelockWindow is how many of the last events before the limit are named in
// a LivelockError.
const livelockWindow = 64

// SetLivelockLimit sets the watchdog's limit; 0 restores the default.
func (q *Queue) SetLivelockLimit(n uint64) {
	q.limit, q.warnAt = n, 0
	if n > livelockWindow {
		q.warnAt = n - livelockWindow
	}
}

// The limit is DefaultLivelockLimit until set: nearLimit sets it on first
// use, which keeps the zero Queue ready to use and watch a single compare.

// LivelockError is the value Step panics with when the watchdog fires: more
// than the limit of events at one instant.
type LivelockError struct {
	At     ktime.Time
	Events uint64
	// Last names the events fired last at At, most frequent first, with
	// their counts among the last livelockWindow.
	Last []NameCount
}

// NameCount is an event name and how often it fired.
type NameCount struct {
	Name  string
	Count int
}

// Error says when time stopped and which events kept firing.
func (e *LivelockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "simulated time stopped advancing at %v: %d events fired at that instant (a livelock); the last %d were", e.At, e.Events, livelockWindow)
	for i, n := range e.Last {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %q x%d", n.Name, n.Count)
	}
	return b.String()
}

// watch counts e, about to fire, and panics with a LivelockError when it is
// one event too many at the current instant. Step and FireNext inline it:
// two compares per event, the rest in nearLimit. The first event, at
// pops 0, starts an instant whatever its time (instant is 0).
func (q *Queue) watch(e *Event, at ktime.Time) {
	if at != q.now {
		q.instant = q.pops
	} else if q.pops-q.instant > q.warnAt {
		q.nearLimit(e)
	}
}

// nearLimit records e's name and panics at the limit; the slow path of
// watch.
func (q *Queue) nearLimit(e *Event) {
	q.same = q.pops - q.instant
	if q.limit == 0 {
		q.SetLivelockLimit(DefaultLivelockLimit)
	}
	if q.same+livelockWindow <= q.limit {
		return
	}
	if q.same+livelockWindow == q.limit+1 {
		q.recent = q.recent[:0] // the first of the window at this instant
	}
	q.recent = append(q.recent, e.Name)
	if q.same >= q.limit {
		panic(q.livelock())
	}
}

func (q *Queue) livelock() *LivelockError {
	count := map[string]int{}
	for _, n := range q.recent {
		count[n]++
	}
	le := &LivelockError{At: q.now, Events: q.same}
	for n, c := range count {
		le.Last = append(le.Last, NameCount{n, c})
	}
	sort.Slice(le.Last, func(i, j int) bool {
		a, b := le.Last[i], le.Last[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Name < b.Name
	})
	return le
}

// Stop makes RunUntil return after the current event; the clock stays at
// that event's time.
func (q *Queue) Stop() { q.stopped = true }

// Stopped reports whether Stop was called.
func (q *Queue) Stopped() bool { return q.stopped }

// Now is the time of the event being fired, or of the last one fired.
func (q *Queue) Now() ktime.Time { return q.now }

// Len is the number of queued events. It walks the queue (tests and
// debugging): the hot path keeps no count.
func (q *Queue) Len() int {
	n := 0
	count := func(ents []entry, firing bool) {
		for i, ent := range ents {
			if i == 0 && firing {
				continue // firing, not queued (and it heads no chain)
			}
			for e := ent.e; e != nil; e = e.next {
				n++
			}
		}
	}
	f := q.firing
	count(q.near, f != nil && !f.far)
	count(q.far.buf, f != nil && f.far)
	return n
}

// smallHeap is the size up to which re-keying a heap's root is cheaper than
// looking up a chain to join.
const smallHeap = 8

// tailSlots is the size of Queue.tails: more than the distinct instants a
// machine's events crowd at.
const tailSlots = 64

// tailSlot hashes a time into Queue.tails (Fibonacci hashing).
func tailSlot(at ktime.Time) int { return int(uint64(at) * 0x9e3779b97f4a7c15 >> 58) }

// tailFor is the event a new event at at is chained after, or nil.
func (q *Queue) tailFor(at ktime.Time) *Event {
	if t := q.tails[tailSlot(at)]; t != nil && t.index != -1 && t.at == at {
		return t
	}
	return nil
}

// rekeyFiring queues the firing event again, at the root of the near heap
// (it fires from) with the key of ent: one sift down instead of a removal
// and an insertion. It becomes its time's tail, so later events of that
// time chain behind it.
func (q *Queue) rekeyFiring(ent entry) {
	e := ent.e
	q.firing = nil
	e.at, e.seq = ent.at, ent.seq
	q.tails[tailSlot(ent.at)] = e
	e.index = 0
	q.near[0] = ent
	q.near.down(0)
}

// rekeyFiringFar is rekeyFiring for an event firing from the far ring's
// front and re-armed beyond the near span: it leaves the front and goes to
// its place, found from the back.
func (q *Queue) rekeyFiringFar(ent entry) {
	e := ent.e
	q.firing = nil
	q.far.popFront()
	e.at, e.seq = ent.at, ent.seq
	q.far.insert(ent)
	q.tails[tailSlot(ent.at)] = e
}

// Pops is the number of events fired so far.
func (q *Queue) Pops() uint64 { return q.pops }

// Schedule queues e at time at, or moves it there if it is already queued.
// Scheduling in the past is an invariant violation: the simulation never goes back.
func (q *Queue) Schedule(e *Event, at ktime.Time) {
	sl := &q.tails[tailSlot(at)]
	var tail *Event // tailFor(at), for schedule
	if t := *sl; t != nil && t.at == at && t.index != -1 && at >= q.now {
		// The common cases of CPUs in lockstep: e joins the chain of its
		// time, behind t.
		tail = t
		if e.index == -1 && q.firing != e {
			// e is in no tier or chain (not queued, not the firing root);
			// it is not t, which is queued.
			q.chainAfter(e, at, t, sl)
			return
		}
		if t != e && (e.index == chained || e.index >= 0 && e.next != nil) {
			// e leaves a chain without a heap sift, or a chain it heads
			// for its successor.
			q.leaveChain(e)
			q.chainAfter(e, at, t, sl)
			return
		}
	}
	if q.firing == e && !e.far && len(q.near) <= smallHeap-q.bigRekey && at >= q.now && at-q.now < q.span() {
		// The firing event re-arms itself in a small near heap, as most
		// steps of a CPU that runs alone do: re-keying the root costs less
		// than looking for a chain. It is the newest event of its time, so
		// it heads any later ones.
		q.seq++
		if at < q.bound {
			q.bound = at
		}
		q.rekeyFiring(entry{at, q.seq, e})
		return
	}
	q.schedule(e, at, tail)
}

// chainAfter queues e at at after t, the tail of at's chain
// (in tails at sl).
func (q *Queue) chainAfter(e *Event, at ktime.Time, t *Event, sl **Event) {
	q.seq++
	if at < q.bound {
		q.bound = at
	}
	e.at, e.seq, e.index, e.prev, e.next = at, q.seq, chained, t, nil
	t.next = e
	*sl = e
}

// leaveChain takes e, a queued event that is chained or heads a chain of
// more than itself, out of it.
func (q *Queue) leaveChain(e *Event) {
	q.dropTail(e)
	if s := e.next; e.index == chained {
		e.prev.next = s
		if s != nil {
			s.prev = e.prev
		}
	} else {
		// Its successor heads the chain in its slot (as in unlink).
		i := e.index
		s.prev, s.index, s.far = nil, i, e.far
		if e.far {
			q.far.base[i] = entry{s.at, s.seq, s}
		} else {
			q.near[i] = entry{s.at, s.seq, s}
			q.near.down(i)
		}
	}
}

// schedule is Schedule's general case; tail is tailFor(at) (Schedule has
// looked it up: nil when at is before the clock).
func (q *Queue) schedule(e *Event, at ktime.Time, tail *Event) {
	if at < q.now {
		panic(fmt.Sprintf("sim: event %q scheduled in the past: at=%v now=%v", e.Name, at, q.now))
	}
	q.seq++
	if at < q.bound {
		q.bound = at // what FireNext sees until the Step ends (if set)
	}
	far := at-q.now >= q.span()
	ent := entry{at, q.seq, e}
	// (The firing event's re-arm in a small near heap is Schedule's.)
	if tail == nil || tail == e {
		if i := e.index; i >= 0 && e.next == nil && e.far == far {
			// A lone head moves within its tier: re-key it, towards the
			// root if its time is earlier (a device programmed sooner),
			// else (a later time, or a newer number) towards the leaves
			// (the far ring's back).
			q.dropTail(e)
			q.tails[tailSlot(at)] = e
			if far {
				q.far.move(i, ent)
				e.at, e.seq = at, q.seq
				return
			}
			earlier := at < e.at
			e.at, e.seq = at, q.seq
			q.near[i] = ent
			if earlier {
				q.near.up(i)
			} else {
				q.near.down(i)
			}
			return
		}
		if q.firing == e && e.far == far {
			// The firing event re-arms itself in its tier: re-key the root.
			if far {
				q.rekeyFiringFar(ent)
			} else {
				q.rekeyFiring(ent)
			}
			return
		}
	}
	if e.index != -1 {
		q.unlink(e)
		if tail == e {
			tail = q.tailFor(at) // e was its time's tail: its predecessor is now
		}
	} else if q.firing == e {
		q.firing = nil
		if e.far {
			q.far.popFront()
		} else {
			q.near.popRoot()
		}
	}
	q.insert(e, at, q.seq, tail)
}

// span is how far ahead an event goes into the far ring.
func (q *Queue) span() ktime.Time {
	if q.nearSpan != 0 {
		return q.nearSpan
	}
	return NearSpan
}

// insert queues the unqueued e at (at, seq): after tail in its chain, or as
// a new head.
func (q *Queue) insert(e *Event, at ktime.Time, seq uint64, tail *Event) {
	e.at, e.seq, e.next = at, seq, nil
	q.tails[tailSlot(at)] = e
	if tail != nil {
		e.prev, e.index = tail, chained
		tail.next = e
		return
	}
	e.prev, e.far = nil, at-q.now >= q.span()
	if e.far {
		q.far.insert(entry{at, seq, e})
	} else {
		q.near.push(entry{at, seq, e})
	}
}

// dropTail forgets e as the tail of its time before it leaves its place.
func (q *Queue) dropTail(e *Event) {
	if sl := &q.tails[tailSlot(e.at)]; *sl == e {
		*sl = e.prev // the chain's tail now, or nil with e the head
	}
}

// unlink takes the queued e out of its chain or tier.
func (q *Queue) unlink(e *Event) {
	q.dropTail(e)
	if e.index == chained {
		e.prev.next = e.next
		if e.next != nil {
			e.next.prev = e.prev
		}
	} else if s := e.next; s != nil {
		// A head leaves: its successor heads the chain in its slot. In the
		// near heap its key is larger than e's, so than its parent's; in
		// the far ring it stays between e's neighbours: every head of
		// their time created after e's chain was closed (tails holds only
		// the newest) has a larger sequence number than every event of
		// e's chain.
		i := e.index
		s.prev, s.index, s.far = nil, i, e.far
		if e.far {
			q.far.base[i] = entry{s.at, s.seq, s}
		} else {
			q.near[i] = entry{s.at, s.seq, s}
			q.near.down(i)
		}
	} else {
		i := e.index
		e.index = -1
		if e.far {
			q.far.removeAt(i)
		} else {
			q.near.removeAt(i)
		}
	}
	e.index, e.prev, e.next = -1, nil, nil
}

// Cancel removes e from the queue if it is queued.
func (q *Queue) Cancel(e *Event) {
	if e.index != -1 {
		q.unlink(e)
	}
}

// FireNext is for the firing event's owner when its handler would re-arm
// it at at (a CPU's next task segment): it reports whether the owner may run
// that step now, within this handler, instead. That is when it is exactly
// what the next Step would fire: e is firing and not re-armed, at is
// earlier than every queued event (a queued event at at was scheduled
// first and goes first), within the Step's limit, the queue is not stopped
// and no poll is due between this event and the next (runsNow). The
// queue then counts the step as fired (watchdog, Pops) and its clock stands
// at at. Skipping the Schedule skips a sequence number: every later one is
// still larger than every earlier one, so no order changes.
func (q *Queue) FireNext(e *Event, at ktime.Time) bool {
	return q.firing == e && q.runsNow(e, at)
}

// FireAfter is FireNext for another event: for the firing event's handler
// when its last act would be to schedule e, neither queued nor firing, at at
// (a CPU woken from a polling idle state: its zero-length exit ends at
// once, and that end is the next step). It reports whether the owner may
// run e's step now, within this handler, instead: e at (at, the next
// sequence number) must be exactly what the next Step would fire, so at is
// not before the clock and earlier than every queued event, within the
// Step's limit, and the queue is not stopped and has no poll due. The queue
// then counts e as fired (watchdog, Pops) and its clock stands at at. The
// firing event stays firing (at its root) until its Step ends: whatever the
// owner schedules meanwhile is ordered by key, as it would be after the
// firing event's removal, and a re-arm of the firing event re-keys its root
// (one sift instead of a removal and an insertion).
func (q *Queue) FireAfter(e *Event, at ktime.Time) bool {
	f := q.firing
	return f != nil && f != e && e.index == -1 && at >= q.now && q.runsNow(e, at)
}

// runsNow is the end of FireNext and FireAfter, while an event fires from a
// tier's root: whether e's step at at is what the next Step would fire, and
// if so it counts it as fired. A poll is due when the Step's own event made
// Pops a multiple of PollEvents: RunUntil polls between that event and the
// next.
func (q *Queue) runsNow(e *Event, at ktime.Time) bool {
	if at > q.stepLimit || q.stopped || q.poll != nil && q.pops%PollEvents == 0 {
		return false
	}
	if !q.boundSet {
		q.setBound()
	}
	if at >= q.bound {
		return false
	}
	q.watch(e, at)
	q.now = at
	q.pops++
	return true
}

// setBound computes bound for the Step firing from a root: the earliest
// queued time, among the firing root's children in the near heap, or the
// entry after it in the far ring, and the other tier's root. Schedule
// lowers it from now on.
func (q *Queue) setBound() { q.bound, q.boundSet = q.earliest(), true }

// earliest is the earliest queued time while an event fires from a root:
// the smallest of the firing tier's entries after its root (the root's
// children in the near heap; in the sorted far ring the first of them is
// the smallest) and the other tier's root.
func (q *Queue) earliest() ktime.Time {
	f, o, n := []entry(q.near), q.far.buf, arity
	if q.firing.far {
		f, o, n = o, f, 1 // the ring's next is its smallest: no look beyond it
	}
	b := ktime.Max
	for c := 1; c <= n && c < len(f); c++ {
		b = min(b, f[c].at)
	}
	if len(o) > 0 {
		b = min(b, o[0].at)
	}
	return b
}

// Peek returns the time of the earliest event, or ktime.Max when the queue is empty.
func (q *Queue) Peek() ktime.Time {
	if q.firing != nil {
		return q.earliest()
	}
	t := ktime.Max
	if len(q.near) > 0 {
		t = q.near[0].at
	}
	if len(q.far.buf) > 0 {
		t = min(t, q.far.buf[0].at)
	}
	return t
}

// Step fires the earliest event if it is due no later than limit. It reports
// whether an event fired. It panics with a *LivelockError when too many
// events fire at one instant (SetLivelockLimit).
func (q *Queue) Step(limit ktime.Time) bool { return q.run(limit, true) }

// RunUntil fires events in order until the queue is empty or the next event is
// later than limit; then the clock stands at limit (if limit is finite).
func (q *Queue) RunUntil(limit ktime.Time) {
	if !q.stopped {
		q.run(limit, false)
	}
	if !q.stopped && limit != ktime.Max && limit > q.now {
		q.now = limit
	}
}

// run is Step (once) and RunUntil's loop (not once: until no event is due
// by limit or the queue is stopped, polling every PollEvents events): one
// loop, so that an event costs no call of its own beyond its handler's.
func (q *Queue) run(limit ktime.Time, once bool) bool {
	for {
		// No event is firing here: each tier's root is its earliest.
		var root *entry
		if f := q.far.buf; len(f) > 0 && (len(q.near) == 0 || f[0].less(&q.near[0])) {
			root = &f[0]
		} else if len(q.near) > 0 {
			root = &q.near[0]
		} else {
			return false
		}
		e, at := root.e, root.at
		if at > limit {
			return false
		}
		q.watch(e, at)
		q.now = at
		q.pops++
		if succ := e.next; succ != nil {
			// Its successor's key is the smallest left: it takes the root
			// (the time is the same).
			succ.prev, succ.index, succ.far = nil, e.index, e.far
			root.seq, root.e = succ.seq, succ
			e.index, e.next = -1, nil
			e.h.Fire(at)
		} else {
			e.index = -1
			q.firing = e
			q.stepLimit, q.boundSet = limit, false
			e.h.Fire(at)
			if q.firing != nil {
				// Not re-armed: take it out now.
				q.firing = nil
				if e.far {
					q.far.popFront()
				} else {
					q.near.popRoot()
				}
			}
		}
		if once {
			return true
		}
		if q.poll != nil && q.pops%PollEvents == 0 {
			q.poll()
		}
		if q.stopped {
			return true
		}
	}
}
