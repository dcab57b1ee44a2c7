package sim

import (
	"fmt"
	"sort"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

func TestQueueOrder(t *testing.T) {
	var q Queue
	var got []string
	add := func(name string, at ktime.Time) *Event {
		e := NewEvent(name, func(ktime.Time) { got = append(got, name) })
		q.Schedule(e, at)
		return e
	}
	add("c", 30)
	add("a1", 10)
	b := add("b", 20)
	add("a2", 10) // same instant as a1, scheduled later: fires after it
	gone := add("gone", 15)
	q.Cancel(gone)
	q.Schedule(b, 5) // moved earlier
	q.RunUntil(25)
	want := []string{"b", "a1", "a2"}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	if q.Now() != 25 || q.Len() != 1 || q.Peek() != 30 {
		t.Errorf("after RunUntil(25): Now %d Len %d Peek %d; want 25, 1, 30", q.Now(), q.Len(), q.Peek())
	}
}

func TestScheduleInThePastPanics(t *testing.T) {
	var q Queue
	q.Schedule(NewEvent("x", func(ktime.Time) {}), 10)
	q.RunUntil(20)
	defer func() {
		if recover() == nil {
			t.Error("scheduling before Now did not panic")
		}
	}()
	q.Schedule(NewEvent("late", func(ktime.Time) {}), 5)
}

// FuzzQueueOrder checks the tiers against a sort: events fire in (time,
// schedule order), whatever the interleaving of schedules, moves and cancels,
// and wherever the near heap's span puts them (the first byte picks it).
func FuzzQueueOrder(f *testing.F) {
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add([]byte{0, 0, 0, 0, 255, 255, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var q Queue
		if len(ops) > 0 {
			q.nearSpan = ktime.Time(ops[0]%64) + 1
			if ops[0]&64 != 0 {
				q.bigRekey = smallHeap
			}
		}
		type rec struct {
			at  ktime.Time
			seq int
		}
		live := map[*Event]rec{}
		var events []*Event
		var fired []rec
		seq := 0
		for i := 0; i+1 < len(ops); i += 2 {
			op, v := ops[i]%4, ktime.Time(ops[i+1])
			switch {
			case op < 2 || len(events) == 0: // schedule a new event
				var e *Event
				e = NewEvent("e", func(now ktime.Time) { fired = append(fired, live[e]); delete(live, e) })
				seq++
				q.Schedule(e, v)
				live[e] = rec{v, seq}
				events = append(events, e)
			case op == 2: // move an existing one
				e := events[int(v)%len(events)]
				if e.Queued() {
					seq++
					q.Schedule(e, v)
					live[e] = rec{v, seq}
				}
			default: // cancel one
				e := events[int(v)%len(events)]
				q.Cancel(e)
				delete(live, e)
			}
		}
		var want []rec
		for _, r := range live {
			want = append(want, r)
		}
		sort.Slice(want, func(i, j int) bool {
			if want[i].at != want[j].at {
				return want[i].at < want[j].at
			}
			return want[i].seq < want[j].seq
		})
		q.RunUntil(ktime.Max)
		if len(fired) != len(want) {
			t.Fatalf("fired %d events, want %d", len(fired), len(want))
		}
		for i := range want {
			if fired[i] != want[i] {
				t.Fatalf("event %d fired as %+v, want %+v", i, fired[i], want[i])
			}
		}
	})
}

func TestLivelockWatchdog(t *testing.T) {
	var q Queue
	q.SetLivelockLimit(1000)
	var ping, pong *Event
	ping = NewEvent("ping cpu1", func(now ktime.Time) { q.Schedule(pong, now) })
	pong = NewEvent("pong cpu1", func(now ktime.Time) { q.Schedule(ping, now) })
	q.Schedule(NewEvent("before", func(ktime.Time) {}), 5)
	q.Schedule(ping, 7)
	le := func() (le *LivelockError) {
		defer func() {
			r := recover()
			var ok bool
			if le, ok = r.(*LivelockError); !ok {
				t.Fatalf("RunUntil panicked with %v, want a *LivelockError", r)
			}
		}()
		q.RunUntil(ktime.Max)
		return nil
	}()
	if le.At != 7 || le.Events != 1000 {
		t.Errorf("LivelockError at %v after %d events, want at 7 after 1000", le.At, le.Events)
	}
	want := []NameCount{{"ping cpu1", 32}, {"pong cpu1", 32}}
	if len(le.Last) != 2 || le.Last[0] != want[0] || le.Last[1] != want[1] {
		t.Errorf("Last = %v, want %v", le.Last, want)
	}
	t.Log(le)

	// As many events, each 1 ns after the last: time advances, no livelock.
	var q2 Queue
	q2.SetLivelockLimit(1000)
	n := 0
	var tick *Event
	tick = NewEvent("tick", func(now ktime.Time) {
		if n++; n < 5000 {
			q2.Schedule(tick, now+1)
		}
	})
	q2.Schedule(tick, 0)
	q2.RunUntil(ktime.Max)
	if n != 5000 {
		t.Errorf("ran %d spread events, want 5000", n)
	}
}

// FuzzQueueWhileFiring checks the queue against a model when the firing
// event itself schedules, re-arms and cancels events (the event being fired
// stays at its tier's root until it returns, and moves to the other tier when
// it re-arms beyond or within the near span) or runs its next step, or
// another event's, in place (FireNext, FireAfter, allowed when nothing queued
// comes first): the firing order, Peek, Len, Queued, Now and Pops must be
// those of a plain sorted list.
func FuzzQueueWhileFiring(f *testing.F) {
	f.Add([]byte{0, 5, 1, 3, 2, 7, 0, 0, 3, 1, 1, 9})
	f.Add([]byte{1, 0, 1, 0, 1, 0, 2, 2, 3, 3, 0, 255})
	f.Add([]byte{3, 200, 3, 2, 3, 5, 1, 9, 3, 0, 2, 7, 3, 1, 0, 3})
	f.Add([]byte{0, 3, 3, 0, 3, 7, 3, 1, 3, 2, 3, 3})
	f.Add([]byte{5, 20, 4, 1, 0, 9, 4, 10, 4, 2, 1, 3, 4, 28})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) < 2 {
			return
		}
		var q Queue
		q.nearSpan = ktime.Time(ops[0]%16) + 1 // both tiers in use
		if ops[0]&16 != 0 {
			q.bigRekey = smallHeap // every re-arm looks for a chain to join
		}
		type rec struct {
			at  ktime.Time
			seq int
		}
		const n = 8
		var events [n]*Event
		live := map[int]rec{} // the model: queued events by number
		seq, pos := 0, 0
		next := func() (byte, byte) {
			a, b := ops[pos%len(ops)], ops[(pos+1)%len(ops)]
			pos += 2
			return a, b
		}
		schedule := func(i int, at ktime.Time) {
			seq++
			q.Schedule(events[i], at)
			live[i] = rec{at, seq}
		}
		earliest := func() (int, rec) {
			best, br := -1, rec{}
			for i, r := range live {
				if best < 0 || r.at < br.at || r.at == br.at && r.seq < br.seq {
					best, br = i, r
				}
			}
			return best, br
		}
		check := func(when string) {
			if q.Len() != len(live) {
				t.Fatalf("%s: Len %d, model %d", when, q.Len(), len(live))
			}
			want := ktime.Max
			if i, r := earliest(); i >= 0 {
				want = r.at
			}
			if got := q.Peek(); got != want {
				t.Fatalf("%s: Peek %v, model %v", when, got, want)
			}
			for i, e := range events {
				if _, ok := live[i]; ok != e.Queued() {
					t.Fatalf("%s: event %d Queued %v, model %v", when, i, e.Queued(), ok)
				}
			}
		}
		fires := 0
		for i := range events {
			events[i] = NewEvent("e", func(now ktime.Time) {
				fires++
				w, r := earliest()
				if w != i || now != r.at {
					t.Fatalf("fired event %d at %v, model says %d at %v", i, now, w, r.at)
				}
				delete(live, i)
				check("firing")
				rearmed := false // FireNext is for an event not re-armed
				// loose: an event left or moved in this Step, which
				// FireNext may still see at its old time (it then says no
				// where the model says yes: never the reverse).
				loose := false
				for k := 0; k < 3; k++ {
					op, v := next()
					if op%5 == 0 || op%5 == 1 && int(v)%n == i {
						rearmed = true
					}
					if _, ok := live[int(v)%n]; ok && (op%5 == 1 || op%5 == 2) {
						loose = true
					}
					switch op % 5 {
					case 0: // re-arm itself
						schedule(i, now+ktime.Time(v%16))
					case 1: // schedule or move another
						schedule(int(v)%n, now+ktime.Time(v/16))
					case 2: // cancel another (or itself: a no-op)
						j := int(v) % n
						q.Cancel(events[j])
						delete(live, j)
					case 3: // run its own next step now if nothing comes first
						if fires >= 200 {
							break // the test's bound on fired events
						}
						at := now + ktime.Time(v%8)
						w, r := earliest()
						want := !rearmed && (w < 0 || at < r.at)
						got := q.FireNext(events[i], at)
						if got != want && (got || !loose) {
							t.Fatalf("FireNext(%d, %v) = %v, model %v (earliest %d at %v)", i, at, got, want, w, r.at)
						}
						if got {
							fires++
							now = at
						}
						if q.Now() != now || q.Pops() != uint64(fires) {
							t.Fatalf("after FireNext: Now %v Pops %d, model %v %d", q.Now(), q.Pops(), now, fires)
						}
					case 4: // run another's step now if nothing comes first
						if fires >= 200 {
							break
						}
						j, at := int(v)%n, now+ktime.Time(v/8%4)
						_, queued := live[j]
						w, r := earliest()
						want := !rearmed && j != i && !queued && (w < 0 || at < r.at)
						got := q.FireAfter(events[j], at)
						if got != want && (got || !loose) {
							t.Fatalf("FireAfter(%d, %v) while %d fires = %v, model %v (earliest %d at %v)", j, at, i, got, want, w, r.at)
						}
						if got {
							// j fired; the ops that follow are its
							// handler's, and i's root stays until the Step
							// ends (a re-arm of i re-keys it).
							fires++
							now = at
						}
						if q.Now() != now || q.Pops() != uint64(fires) {
							t.Fatalf("after FireAfter: Now %v Pops %d, model %v %d", q.Now(), q.Pops(), now, fires)
						}
					}
					check("after an op while firing")
				}
			})
		}
		for i := range events {
			_, v := next()
			schedule(i, ktime.Time(v%32))
		}
		for fires < 200 && q.Step(ktime.Max) {
			check("after a step")
		}
		if fires < 200 && len(live) != 0 {
			t.Fatalf("queue empty with %d events left in the model", len(live))
		}
	})
}

// TestQueueChains checks events of one time in lockstep: chained in
// scheduling order, a chain closed when another time with the same tails
// slot takes the slot (the next event of the first time heads a new chain),
// and the head, a middle event and the tail cancelled or moved.
func TestQueueChains(t *testing.T) {
	var q Queue
	at := ktime.Time(1000)
	other := at + 1 // a time sharing at's tails slot
	for tailSlot(other) != tailSlot(at) {
		other++
	}
	var got []string
	ev := map[string]*Event{}
	add := func(name string, when ktime.Time) {
		e := ev[name]
		if e == nil {
			e = NewEvent(name, func(ktime.Time) { got = append(got, name) })
			ev[name] = e
		}
		q.Schedule(e, when)
	}
	for _, n := range []string{"a1", "a2", "a3", "a4"} {
		add(n, at)
	}
	add("o1", other) // takes the slot: a5 starts a new chain of at
	add("a5", at)
	add("a6", at)
	q.Cancel(ev["a1"]) // a head: a2 heads the chain
	q.Cancel(ev["a3"]) // a middle one
	q.Cancel(ev["a6"]) // the tail of the newest chain: a7 follows a5
	add("a7", at)
	add("a2", at) // moved to the end of the time
	add("e0", at-1)
	if q.Len() != 6 {
		t.Fatalf("Len = %d, want 6", q.Len())
	}
	q.RunUntil(ktime.Max)
	want := []string{"e0", "a4", "a5", "a7", "a2", "o1"}
	if at > other {
		want = []string{"e0", "o1", "a4", "a5", "a7", "a2"}
	}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
}

// BenchmarkQueueWakeups drives the queue the way the 64-CPU cyclictest
// drives it: each CPU sleeps with a device event about 200 us ahead (the
// far ring), and on each wakeup runs a chain of short steps of one re-armed
// run event (the near heap) before it arms the device again.
func BenchmarkQueueWakeups(b *testing.B) {
	const cpus, steps = 64, 9
	var q Queue
	rng := uint64(1)
	rnd := func(n uint64) ktime.Time {
		rng = rng*6364136223846793005 + 1442695040888963407
		return ktime.Time(rng >> 33 % n)
	}
	fired := 0
	for c := 0; c < cpus; c++ {
		var dev, run *Event
		left := 0
		run = NewEvent("run", func(now ktime.Time) {
			fired++
			if left--; left > 0 {
				q.Schedule(run, now+300+rnd(700))
				return
			}
			q.Schedule(dev, now+200_000+rnd(2000))
		})
		dev = NewEvent("dev", func(now ktime.Time) {
			fired++
			left = steps - 1
			q.Schedule(run, now+2000)
		})
		q.Schedule(dev, rnd(200_000))
	}
	b.ResetTimer()
	for fired < b.N {
		q.Step(ktime.Max)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fired), "ns/event")
}

// TestFireNext checks when the firing event may run its next step in place:
// not at or after a queued event's time, not past the Step's limit, not
// after Stop or when a poll is due, not once re-armed; and that it counts as
// a fired event.
func TestFireNext(t *testing.T) {
	var q Queue
	var e, o *Event
	var got []bool
	e = NewEvent("e", func(now ktime.Time) {
		got = append(got,
			q.FireNext(e, 20), // o is queued at 20, scheduled first
			q.FireNext(e, 19), // earlier than o
			q.FireNext(e, 19), // again at the same instant
		)
		if q.Now() != 19 || q.Pops() != 3 {
			t.Errorf("after two FireNext: Now %v Pops %d, want 19 3", q.Now(), q.Pops())
		}
		// o moves to 19: it comes first now; 26 is past the limit.
		q.Schedule(o, 19)
		got = append(got, q.FireNext(e, 19), q.FireNext(e, 18), q.FireNext(e, 26))
		q.Stop()
		got = append(got, q.FireNext(e, 18))
		q.stopped = false
		q.Schedule(e, 30)
		got = append(got, q.FireNext(e, 18)) // re-armed
	})
	o = NewEvent("o", func(ktime.Time) {})
	q.Schedule(e, 10)
	q.Schedule(o, 20)
	q.Step(25)
	want := []bool{false, true, true, false, true, false, false, false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("FireNext answers %v, want %v", got, want)
	}
	// A poll due after this event: the next goes back through RunUntil.
	var p Queue
	p.SetPoll(func() {})
	p.pops = PollEvents - 1
	var f *Event
	var answers []bool
	f = NewEvent("f", func(now ktime.Time) {
		answers = append(answers, p.FireNext(f, now+1))
	})
	p.Schedule(f, 1)
	p.Step(ktime.Max)
	p.Schedule(f, 2)
	p.Step(ktime.Max)
	if fmt.Sprint(answers) != "[false true]" {
		t.Errorf("FireNext with a poll due after the firing event, then not: %v, want [false true]", answers)
	}
}

// TestFireAfter checks when the firing event's handler may run another
// event's step in place: only for an event neither queued nor firing, not
// before the clock, not at or after a queued event's time, not past the
// Step's limit, not after Stop, not once the firing event re-armed, not
// outside a Step or for an event fired from a chain; that it counts as a
// fired event; and that the firing event's re-arm afterwards keeps the
// order.
func TestFireAfter(t *testing.T) {
	var q Queue
	var e, o, a, b *Event
	var got []bool
	var fired []string
	e = NewEvent("e", func(now ktime.Time) {
		fired = append(fired, "e")
		if len(fired) > 1 {
			return // the re-armed step at 15
		}
		got = append(got,
			q.FireAfter(e, now),   // firing itself
			q.FireAfter(o, now),   // queued
			q.FireAfter(a, now-1), // before the clock
			q.FireAfter(a, 20),    // o is queued at 20, scheduled first
			q.FireAfter(a, 26),    // past the limit
		)
		q.Stop()
		got = append(got, q.FireAfter(a, now))
		q.stopped = false
		got = append(got, q.FireAfter(a, 12), q.FireAfter(b, 12)) // a earlier than o, then b at the same instant
		if q.Now() != 12 || q.Pops() != 3 {
			t.Errorf("after two FireAfter: Now %v Pops %d, want 12 3", q.Now(), q.Pops())
		}
		q.Schedule(e, 15)                     // the firing root re-keyed: still before o
		got = append(got, q.FireAfter(a, 13)) // e re-armed: no firing root
	})
	o = NewEvent("o", func(ktime.Time) { fired = append(fired, "o") })
	a = NewEvent("a", func(ktime.Time) { fired = append(fired, "a") })
	b = NewEvent("b", func(ktime.Time) { fired = append(fired, "b") })
	q.Schedule(e, 10)
	q.Schedule(o, 20)
	q.Step(25)
	want := []bool{false, false, false, false, false, false, true, true, false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("FireAfter answers %v, want %v", got, want)
	}
	if q.Len() != 2 || q.Peek() != 15 {
		t.Errorf("after the Step: Len %d Peek %v, want 2 15", q.Len(), q.Peek())
	}
	if q.FireAfter(a, 15) {
		t.Error("FireAfter outside a Step said yes")
	}
	// Two events of one instant: the first fires from the head of their
	// chain (no firing root), the second from the heap root it then takes.
	c := NewEvent("c", func(now ktime.Time) {
		fired = append(fired, "c")
		got = append(got, q.FireAfter(a, now))
	})
	q.Schedule(c, 17)
	q.Schedule(b, 17)
	got = got[:0]
	q.RunUntil(ktime.Max)
	if fmt.Sprint(got) != "[false]" || fmt.Sprint(fired) != "[e e c b o]" {
		t.Errorf("fired %v, FireAfter from a chain %v; want [e e c b o], [false]", fired, got)
	}
}

// TestPollWithStepsInPlace checks that steps run in place (FireNext,
// FireAfter) never pass a poll: RunUntil polls once at every multiple of
// PollEvents, between the events it would separate.
func TestPollWithStepsInPlace(t *testing.T) {
	for _, after := range []bool{false, true} {
		var q Queue
		const total = 3*PollEvents + 7
		polls, bad := 0, 0
		q.SetPoll(func() {
			polls++
			if q.Pops()%PollEvents != 0 {
				bad++
			}
		})
		var e, f *Event
		e = NewEvent("e", func(now ktime.Time) {
			for {
				if q.Pops() >= total {
					return
				}
				if after {
					if !q.FireAfter(f, now) {
						q.Schedule(f, now)
						return
					}
					// f's step, in place: it schedules e.
					now++
					q.Schedule(e, now)
					return
				}
				if !q.FireNext(e, now+1) {
					q.Schedule(e, now+1)
					return
				}
				now++
			}
		})
		f = NewEvent("f", func(now ktime.Time) {
			if q.Pops() < total {
				q.Schedule(e, now+1)
			}
		})
		q.Schedule(e, 1)
		q.RunUntil(ktime.Max)
		if q.Pops() != total || polls != total/PollEvents || bad != 0 {
			t.Errorf("FireAfter %v: %d events, %d polls (%d not at a multiple of %d), want %d and %d",
				after, q.Pops(), polls, bad, PollEvents, total, total/PollEvents)
		}
	}
}

// TestFarRingTies checks the order of far events of one time that are not
// one chain (another time took their tails slot in between), so that the
// far ring orders them by their sequence numbers: a head moved to that time
// from later (ring.move towards the front) goes behind the heads already
// there, with the number of its move, not the one of its first schedule
// (it was scheduled first of all, so an order by that number, or a move
// that stopped at the first head of its time, fires it first); a move to a
// later time passes the heads before it; and the firing front re-armed to a
// time of other heads (rekeyFiringFar) goes behind them, with its new
// number too.
func TestFarRingTies(t *testing.T) {
	var q Queue
	at := ktime.Time(1_000_000) // far: beyond NearSpan from 0
	slotAfter := func(from ktime.Time) ktime.Time {
		for tailSlot(from) != tailSlot(at) {
			from++
		}
		return from
	}
	other := slotAfter(at + 2*NearSpan) // far from at, in at's tails slot
	third := slotAfter(other + 1)
	var got []string
	ev := map[string]*Event{}
	var add func(name string, when ktime.Time)
	add = func(name string, when ktime.Time) {
		e := ev[name]
		if e == nil {
			e = NewEvent(name, func(now ktime.Time) {
				got = append(got, name)
				if name == "a1" && now == at {
					// q1 takes the slot, so that a1's re-arm to other is
					// a head there, behind o1, o2 and o3's chain.
					add("q1", third)
					add("a1", other)
				}
			})
			ev[name] = e
		}
		q.Schedule(e, when)
	}
	add("x", at+5000) // the first number of all
	add("a1", at)
	add("o1", other) // takes the slot from at's chain
	add("a2", at)    // a second head of at, behind a1
	add("o2", other) // a second head of other
	add("x", at)     // a lone head moved earlier, to at: behind a2
	add("y", at+7000)
	add("o3", other) // a third head of other
	add("z", other)  // o3's chain
	add("w", at+3000)
	add("w", at+9000) // a lone head moved later, past y
	if len(q.far.buf) != 8 || len(q.near) != 0 {
		t.Fatalf("near %d heads, far %d; want 0 and 8", len(q.near), len(q.far.buf))
	}
	q.RunUntil(ktime.Max)
	want := []string{"a1", "a2", "x", "y", "w", "o1", "o2", "o3", "z", "a1", "q1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}
