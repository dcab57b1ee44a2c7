package sim

import (
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

// FuzzQueueOrder checks the heap against a sort: events fire in (time,
// schedule order), whatever the interleaving of schedules, moves and cancels.
func FuzzQueueOrder(f *testing.F) {
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add([]byte{0, 0, 0, 0, 255, 255, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var q Queue
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
