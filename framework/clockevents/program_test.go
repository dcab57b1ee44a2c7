package clockevents

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

const us = ktime.Microsecond

// TestProgramClamp checks clockevents_program_event()'s clamp of delta to
// [min_delta_ns, max_delta_ns] and its ns->ticks conversion on the HPET scale
// (mult 61496115, shift 32; min 13410 ns = 192 ticks; max 149983003521 ns).
func TestProgramClamp(t *testing.T) {
	tests := []struct {
		name      string
		delta     int64
		wantTicks uint64
	}{
		{"below min", 1 * us, 192},                     // clamped up to 13410 ns
		{"15us", 15 * us, 214},                         // 15000*mult>>32
		{"1ms", 1000 * us, 14318},                      // 1e6*mult>>32 = 14318.18
		{"beyond max", 200 * ktime.Second, 0x7FFFFFFF}, // clamped to max_delta_ns
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, f := newDevice(hpetSpec, 100, Options{})
			now := ktime.Time(5 * ktime.Millisecond)
			r := d.Program(0, now, now.Add(tt.delta), false)
			if r.ETIME || r.Writes != 1 || len(f.writes) != 1 {
				t.Fatalf("Program(+%d) = %+v, want one successful write", tt.delta, r)
			}
			if got := f.writes[0].ticks; got != tt.wantTicks {
				t.Errorf("Program(+%d) wrote %d ticks, want %d", tt.delta, got, tt.wantTicks)
			}
			if r.Cost != 100 || r.FireAt != f.fire[0] || d.FireAt(0) != r.FireAt {
				t.Errorf("Program(+%d) = cost %d fire %v (device %v), want cost 100 fire %v", tt.delta, r.Cost, r.FireAt, d.FireAt(0), f.fire[0])
			}
			if d.NextEvent(0) != now.Add(tt.delta) {
				t.Errorf("NextEvent = %v, want %v", d.NextEvent(0), now.Add(tt.delta))
			}
		})
	}
}

// TestProgramPast: a past expiry is -ETIME without force and the min delay
// with force (clockevents_program_min_delta(), next_event = now + min_delta_ns).
func TestProgramPast(t *testing.T) {
	now := ktime.Time(10 * ktime.Millisecond)
	for _, force := range []bool{false, true} {
		d, f := newDevice(hpetSpec, 100, Options{})
		r := d.Program(0, now, now-1, force)
		if !force {
			if !r.ETIME || r.Writes != 0 || d.NextEvent(0) != now-1 {
				t.Errorf("Program(past, force=0) = %+v next %v, want -ETIME, no write, next_event kept", r, d.NextEvent(0))
			}
			continue
		}
		if r.ETIME || r.Writes != 1 || r.Retries != 1 || f.writes[0].ticks != 192 {
			t.Errorf("Program(past, force=1) = %+v writes %+v, want one 192-tick retry", r, f.writes)
		}
		if want := now.Add(13410); d.NextEvent(0) != want {
			t.Errorf("NextEvent after forced past = %v, want now+min_delta_ns %v", d.NextEvent(0), want)
		}
	}
}

// TestProgramHPETRace is scenario 7 of
// docs/reference/hrtimer-clockevents.md on the core: the HPET answers -ETIME.
func TestProgramHPETRace(t *testing.T) {
	now := ktime.Time(ktime.Second)
	failFirst := func(k int) func(int, int, ktime.Time, uint64) bool {
		return func(n, _ int, _ ktime.Time, _ uint64) bool { return n < k }
	}
	t.Run("force=0 counts one failed pass", func(t *testing.T) {
		d, _ := newDevice(hpetSpec, 2000, Options{})
		d.dev.(*fakeDev).etime = failFirst(1)
		r := d.Program(0, now, now.Add(15*us), false)
		if !r.ETIME || r.Writes != 1 || r.Retries != 0 || r.FireAt != ktime.Max {
			t.Errorf("Program(+15us, force=0) = %+v, want -ETIME after 1 write", r)
		}
		if s := d.Stats(0); s.ETIME != 1 || s.Failures != 1 {
			t.Errorf("Stats = %+v, want ETIME 1, Failures 1", s)
		}
	})
	t.Run("one clean retry", func(t *testing.T) {
		d, f := newDevice(hpetSpec, 2000, Options{})
		f.etime = failFirst(1)
		r := d.Program(0, now, now.Add(15*us), true)
		if r.ETIME || r.Writes != 2 || r.Retries != 1 || r.Raises != 0 || r.Cost != 4000 {
			t.Fatalf("Program(+15us, force=1) = %+v, want 2 writes, 1 retry, cost 4000", r)
		}
		// The retry runs at the time the first write ended.
		if f.writes[1].at != now.Add(2000) || f.writes[1].ticks != 192 {
			t.Errorf("retry write = %+v, want at now+2000ns with 192 ticks", f.writes[1])
		}
		if d.NextEvent(0) != now.Add(2000+13410) {
			t.Errorf("NextEvent = %v, want %v", d.NextEvent(0), now.Add(2000+13410))
		}
	})
	t.Run("persistent interference raises min_delta_ns", func(t *testing.T) {
		d, f := newDevice(hpetSpec, 2000, Options{})
		f.etime = failFirst(4) // the normal write and three retries fail
		r := d.Program(0, now, now.Add(15*us), true)
		// 13410 + 13410>>1 = 20115; the fourth retry uses it: 20115*mult>>32 = 288.
		if r.ETIME || r.Writes != 5 || r.Retries != 4 || r.Raises != 1 || r.MinDeltaNs != 20115 || d.MinDeltaNs(0) != 20115 {
			t.Fatalf("Program = %+v, want 5 writes, 4 retries, min_delta_ns 20115", r)
		}
		if got := f.writes[4].ticks; got != 288 {
			t.Errorf("write after raise = %d ticks, want 288", got)
		}
		want := []string{"CE: hpet increased min_delta_ns to 20115 nsec"}
		if got := r.Log("hpet", 1000); !reflect.DeepEqual(got, want) {
			t.Errorf("Log = %q, want %q", got, want)
		}
		// The raise is permanent: a later 15 us event is clamped to it.
		f.etime = nil
		r = d.Program(0, now.Add(ktime.Millisecond), now.Add(ktime.Millisecond+15*us), false)
		if got := f.writes[len(f.writes)-1].ticks; got != 288 || r.Writes != 1 {
			t.Errorf("later 15us program wrote %d ticks (%+v), want 288 (clamped to the raised min)", got, r)
		}
	})
	t.Run("give up at one jiffy", func(t *testing.T) {
		d, f := newDevice(hpetSpec, 2000, Options{HZ: 1000})
		f.etime = func(int, int, ktime.Time, uint64) bool { return true }
		r := d.Program(0, now, now.Add(15*us), true)
		// 13410 -> 20115 -> 30172 -> 45258 -> 67887 -> 101830 -> 152745 ->
		// 229117 -> 343675 -> 515512 -> 773268 -> 1000000 (cap): 11 raises,
		// 3 tries at each of the 12 levels, plus the normal write.
		if !r.ETIME || !r.GaveUp || r.Raises != 11 || r.Retries != 36 || r.Writes != 37 || d.NextEvent(0) != ktime.Max || r.FireAt != ktime.Max {
			t.Fatalf("Program = %+v next %v, want give-up after 11 raises, 36 retries", r, d.NextEvent(0))
		}
		log := r.Log("hpet", 1000)
		if len(log) != 12 || log[10] != "CE: hpet increased min_delta_ns to 1000000 nsec" || log[11] != "CE: Reprogramming failure. Giving up" {
			t.Errorf("Log = %q", log)
		}
		if s := d.Stats(0); s.GiveUps != 1 || s.Raises != 11 || s.Retries != 36 || s.Writes != 37 || s.Cost != 37*2000+7 { // + the switch to ONESHOT
			t.Errorf("Stats = %+v", s)
		}
	})
}

// TestMinDeltaVariants checks the two generic (non-MIN_ADJUST) variants of
// clockevents_program_min_delta().
func TestMinDeltaVariants(t *testing.T) {
	now := ktime.Time(ktime.Second)
	always := func(int, int, ktime.Time, uint64) bool { return true }
	t.Run("retry10", func(t *testing.T) {
		d, f := newDevice(hpetSpec, 1000, Options{MinDelta: RetryTenfold})
		f.etime = always
		r := d.Program(0, now, now-1, true)
		if !r.ETIME || r.Writes != 10 || r.Retries != 10 || r.Raises != 0 || d.MinDeltaNs(0) != 13410 {
			t.Fatalf("Program = %+v, want 10 failed retries, min_delta_ns unchanged", r)
		}
		for k, w := range f.writes {
			// delta = (k+1)*13410 ns -> (k+1)*13410*mult>>32 ticks
			want := uint64(k+1) * 13410 * 61496115 >> 32
			if w.ticks != want {
				t.Errorf("retry %d wrote %d ticks, want %d", k+1, w.ticks, want)
			}
		}
		// next_event holds the last candidate: the 10th try started at
		// now+9us (nine 1 us writes) with delta 10*13410.
		if want := now.Add(9000 + 134100); d.NextEvent(0) != want {
			t.Errorf("NextEvent = %v, want %v", d.NextEvent(0), want)
		}
	})
	t.Run("once", func(t *testing.T) {
		d, f := newDevice(hpetSpec, 1000, Options{MinDelta: RetryOnce})
		f.etime = always
		r := d.Program(0, now, now.Add(20*us), true)
		if !r.ETIME || r.Writes != 2 || r.Retries != 1 {
			t.Errorf("Program = %+v, want the normal write and one retry", r)
		}
	})
}

// TestStarvationGuard is scenario 8 of
// docs/reference/hrtimer-clockevents.md: a timer re-armed at
// absolute 1 ns a million times without the interrupt running.
func TestStarvationGuard(t *testing.T) {
	now := ktime.Time(ktime.Second)
	const n = 1_000_000
	for _, guard := range []bool{false, true} {
		d, f := newDevice(lapicSpec, 60, Options{StarvationGuard: guard})
		for range n {
			d.Program(0, now, 1, true)
		}
		want := n
		if guard {
			want = 1
		}
		if len(f.writes) != want {
			t.Errorf("guard=%v: %d writes for %d re-arms, want %d", guard, len(f.writes), n, want)
		}
		if !guard {
			continue
		}
		if !d.Forced(0) || d.Stats(0).Skipped != n-1 {
			t.Errorf("guard: forced=%v skipped=%d, want forced, %d skipped", d.Forced(0), d.Stats(0).Skipped, n-1)
		}
		// The guard wrote min_delta_ticks itself, not a converted delta.
		if f.writes[0].ticks != 0xF {
			t.Errorf("guard: forced write = %d ticks, want min_delta_ticks 15", f.writes[0].ticks)
		}
		fire := d.FireAt(0)
		// The interrupt clears the flag; the next past program writes again.
		d.Ack(0, fire)
		if d.Forced(0) {
			t.Errorf("guard: forced after Ack")
		}
		d.Program(0, fire, 1, true)
		if len(f.writes) != 2 || !d.Forced(0) {
			t.Errorf("guard: after Ack %d writes forced=%v, want 2 and forced", len(f.writes), d.Forced(0))
		}
		// A far-future program (> min_delta_ns) is written and clears it.
		r := d.Program(0, fire, fire.Add(ktime.Millisecond), true)
		if len(f.writes) != 3 || d.Forced(0) || r.Skipped {
			t.Errorf("guard: far program %+v, %d writes forced=%v, want a write clearing the flag", r, len(f.writes), d.Forced(0))
		}
		// Past without force stays -ETIME ("Required for tick_periodic()").
		if r := d.Program(0, fire, 1, false); !r.ETIME || len(f.writes) != 3 {
			t.Errorf("guard: past force=0 = %+v, want -ETIME without write", r)
		}
	}
}

// TestProgramStopped checks tick_program_event(): KTIME_MAX stops the device,
// the next event switches it back to ONESHOT first.
func TestProgramStopped(t *testing.T) {
	d, f := newDevice(lapicSpec, 60, Options{})
	now := ktime.Time(ktime.Millisecond)
	d.Program(1, now, now.Add(ktime.Millisecond), false)
	r := d.Program(1, now, ktime.Max, false)
	if d.State(1) != sdk.StateOneshotStopped || d.NextEvent(1) != ktime.Max || r.Writes != 0 || r.FireAt != ktime.Max || r.Cost != 7 {
		t.Fatalf("Program(Max) = %+v state %v next %v, want oneshot_stopped, next max, state cost 7", r, d.State(1), d.NextEvent(1))
	}
	r = d.Program(1, now, now.Add(50*us), false)
	if d.State(1) != sdk.StateOneshot || r.Writes != 1 || r.Cost != 7+60 {
		t.Errorf("Program after stop = %+v state %v, want oneshot, 1 write, cost 67", r, d.State(1))
	}
	if want := []sdk.DeviceState{sdk.StateOneshotStopped, sdk.StateOneshot}; !reflect.DeepEqual(f.states, want) {
		t.Errorf("driver state calls = %v, want %v", f.states, want)
	}
	// The write starts after the state change: TSC/8 ticks for 50 us minus
	// the 7 ns the switch took.
	if w := f.writes[len(f.writes)-1]; w.at != now.Add(7) {
		t.Errorf("write at %v, want %v", w.at, now.Add(7))
	}
}

// TestProgramShutdown: clockevents_program_event() records next_event but does
// not touch a SHUTDOWN device.
func TestProgramShutdown(t *testing.T) {
	d, f := newDevice(lapicSpec, 60, Options{})
	d.SetState(2, 0, sdk.StateShutdown, 0)
	r := d.Program(2, 0, ktime.Time(ktime.Millisecond), true)
	if r.Writes != 0 || r.ETIME || r.FireAt != ktime.Max || d.NextEvent(2) != ktime.Time(ktime.Millisecond) || len(f.writes) != 0 {
		t.Errorf("Program(shutdown) = %+v next %v, want no write, next_event recorded", r, d.NextEvent(2))
	}
	d.Shutdown(2, 0)
	if d.NextEvent(2) != ktime.Max {
		t.Errorf("Shutdown left next_event %v, want max", d.NextEvent(2))
	}
}

// TestSetState checks __clockevents_switch_state()'s transition rules.
func TestSetState(t *testing.T) {
	oneshotOnly := lapicSpec
	tests := []struct {
		name     string
		spec     sdk.DeviceSpec
		from, to sdk.DeviceState
		ok       bool
		calls    int
	}{
		{"detached to shutdown", hpetSpec, sdk.StateDetached, sdk.StateShutdown, true, 1},
		{"shutdown to oneshot", hpetSpec, sdk.StateShutdown, sdk.StateOneshot, true, 1},
		{"shutdown to periodic", hpetSpec, sdk.StateShutdown, sdk.StatePeriodic, true, 1},
		{"periodic without feature", oneshotOnly, sdk.StateShutdown, sdk.StatePeriodic, false, 0},
		{"oneshot to stopped", hpetSpec, sdk.StateOneshot, sdk.StateOneshotStopped, true, 1},
		{"stopped only from oneshot", hpetSpec, sdk.StateShutdown, sdk.StateOneshotStopped, false, 0},
		{"same state is a no-op", hpetSpec, sdk.StateOneshot, sdk.StateOneshot, true, 0},
		{"oneshot to detached shuts down", hpetSpec, sdk.StateOneshot, sdk.StateDetached, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(tt.spec, 10)
			d, err := New(f, Options{HZ: 250})
			if err != nil {
				t.Fatal(err)
			}
			if d.State(0) != sdk.StateDetached {
				t.Fatalf("new channel state %v, want detached", d.State(0))
			}
			if tt.from != sdk.StateDetached {
				d.SetState(0, 0, tt.from, 4_000_000)
			}
			f.states = nil
			r := d.SetState(0, 0, tt.to, 4_000_000)
			if r.OK != tt.ok || len(f.states) != tt.calls {
				t.Errorf("SetState(%v -> %v) = %+v with %d driver calls, want ok=%v, %d calls", tt.from, tt.to, r, len(f.states), tt.ok, tt.calls)
			}
			want := tt.from
			if tt.ok {
				want = tt.to
			}
			if d.State(0) != want {
				t.Errorf("state after SetState(%v -> %v) = %v, want %v", tt.from, tt.to, d.State(0), want)
			}
		})
	}
}

// TestAckPeriodic: a periodic channel keeps firing every period; Ack in
// oneshot mode clears next_event (hrtimer_interrupt()'s first statement).
func TestAckPeriodic(t *testing.T) {
	d, _ := newDevice(hpetSpec, 10, Options{})
	d.SetState(0, 0, sdk.StateShutdown, 0)
	r := d.SetState(0, 0, sdk.StatePeriodic, 4_000_000)
	if r.FireAt != 4_000_000 || d.FireAt(0) != 4_000_000 {
		t.Fatalf("SetState(periodic) = %+v, want first tick at 4ms", r)
	}
	a := d.Ack(0, r.FireAt)
	if a.FireAt != 8_000_000 || d.FireAt(0) != 8_000_000 || a.Cost != 3 {
		t.Errorf("Ack(periodic) = %+v, want next tick at 8ms, cost 3", a)
	}
	d.SetState(0, 0, sdk.StateOneshot, 0)
	d.Program(0, 8_000_000, 9_000_000, false)
	a = d.Ack(0, d.FireAt(0))
	if a.Event != 9_000_000 || a.FireAt != ktime.Max || d.NextEvent(0) != ktime.Max || d.FireAt(0) != ktime.Max {
		t.Errorf("Ack(oneshot) = %+v next %v, want event 9ms, no further fire, next_event max", a, d.NextEvent(0))
	}
}

// TestProgramAllocs: programming allocates nothing.
func TestProgramAllocs(t *testing.T) {
	d, f := newDevice(lapicSpec, 60, Options{})
	f.writes = make([]fakeWrite, 0, 4096)
	now := ktime.Time(ktime.Millisecond)
	allocs := testing.AllocsPerRun(1000, func() {
		f.writes = f.writes[:0]
		d.Program(0, now, now.Add(100*us), true)
		d.Program(0, now, now-5, true)
		d.Ack(0, now)
	})
	if allocs != 0 {
		t.Errorf("Program+Ack allocs = %v, want 0", allocs)
	}
}

// TestNewErrors checks New's validation.
func TestNewErrors(t *testing.T) {
	noOneshot := hpetSpec
	noOneshot.Features = sdk.FeatPeriodic
	bad := hpetSpec
	bad.MinDeltaTicks = 0
	tests := []struct {
		name string
		spec sdk.DeviceSpec
		hz   int
	}{
		{"no oneshot", noOneshot, 1000},
		{"zero min", bad, 1000},
		{"zero HZ", hpetSpec, 0},
	}
	for _, tt := range tests {
		if _, err := New(newFake(tt.spec, 1), Options{HZ: tt.hz}); err == nil {
			t.Errorf("New(%s) = nil error, want one", tt.name)
		}
	}
}

// TestCounters: per CPU for a per-CPU device, summed for a global one.
func TestCounters(t *testing.T) {
	d, f := newDevice(hpetSpec, 100, Options{})
	f.etime = func(n, _ int, _ ktime.Time, _ uint64) bool { return n == 0 }
	d.Program(0, 0, ktime.Time(20*us), true)
	got := d.Counters()
	want := []sdk.Counter{
		{Name: "programs", CPU: -1, Value: 1}, {Name: "writes", CPU: -1, Value: 2},
		{Name: "cost_ns", CPU: -1, Value: 7 + 200}, {Name: "etime", CPU: -1, Value: 1},
		{Name: "failures", CPU: -1, Value: 0}, {Name: "retries", CPU: -1, Value: 1},
		{Name: "min_delta_raises", CPU: -1, Value: 0}, {Name: "give_ups", CPU: -1, Value: 0},
		{Name: "forced_skips", CPU: -1, Value: 0}, {Name: "state_changes", CPU: -1, Value: 1},
		{Name: "interrupts", CPU: -1, Value: 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Counters() = %+v, want %+v", got, want)
	}
	l, _ := newDevice(lapicSpec, 60, Options{})
	if got := l.Counters(); len(got) != 44 || got[11].CPU != 1 || got[11].Name != "programs" {
		t.Errorf("per-CPU Counters() = %+v", got)
	}
}

// TestChannelLayout: a channel record is two cache lines, the fields of the
// hot path in the first.
func TestChannelLayout(t *testing.T) {
	var c channel
	if n := unsafe.Sizeof(c); n != 128 {
		t.Errorf("channel is %d bytes, want 128", n)
	}
	if off := unsafe.Offsetof(c.forced); off >= 64 {
		t.Errorf("forced at offset %d, want it in the first 64 bytes", off)
	}
}
