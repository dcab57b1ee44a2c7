package sdktest

import (
	"sort"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// The cross-CPU placement part of the TimerBase suite: a 4-CPU machine with
// kernel.timer_migration on and CPU 3 outside the timer housekeeping mask
// (nohz_full=3), at HZ 1000. docs/reference/migration.md has the rules.
const tbPlaceCPUs = 4

// tbPlaceFresh returns a plugin configured with its schema defaults for the
// placement machine.
func tbPlaceFresh(t *testing.T, newPlugin func(*testing.T) sdk.TimerBase) sdk.TimerBase {
	t.Helper()
	p := newPlugin(t)
	cfg := mustDefaults(t, p.Schema())
	hk := sdk.CPUSet{0b0111}
	s := sdk.Setup{CPUs: tbPlaceCPUs, HZ: 1000, HighRes: true, Seed: 1, TimerMigration: true, TimerHousekeeping: &hk}
	if d := p.Configure(s, cfg); d.HasErrors() {
		t.Fatalf("Configure(defaults, timer_migration) = %v", d)
	}
	return p
}

// idle returns a Placement with the given CPUs idle.
func idle(cpus ...int) *sdk.Placement {
	p := &sdk.Placement{}
	for _, c := range cpus {
		p.Idle.Put(c, true)
	}
	return p
}

// tbCheckPlacement checks where ModTimer queues timers while
// kernel.timer_migration is on, in every era a plugin may model:
//
//   - a pinned timer (TIMER_PINNED) stays on the calling CPU, idle or not
//     (get_target_base() / get_timer_this_cpu_base() keep it);
//   - a timer started on a busy housekeeping CPU stays there
//     (get_nohz_timer_target() returns the calling CPU; 6.9+ always local);
//   - a timer that moves goes to a busy housekeeping CPU: never to an idle
//     one, never to a nohz_full one (get_nohz_timer_target());
//   - every timer expires exactly once, on the CPU ModTimer said, and
//     State is that CPU's;
//   - with split bases (6.9+, State.Split) a non-pinned timer is in
//     GlobalNext, a pinned one in LocalNext, and ExpireRemote expires the
//     global one, not the pinned one (timer_expire_remote() runs
//     BASE_GLOBAL only).
func tbCheckPlacement(t *testing.T, newPlugin func(*testing.T) sdk.TimerBase) {
	j0 := ktime.InitialJiffies(1000)
	p := tbPlaceFresh(t, newPlugin)
	type start struct {
		id   sdk.TimerID
		cpu  int
		tm   sdk.WheelTimer
		want string // the rule
	}
	starts := []start{
		{1, 1, sdk.WheelTimer{Expires: j0 + 20, Flags: sdk.TimerPinned, Placement: idle(1, 2, 3)}, "pinned on idle CPU 1: stays"},
		{2, 0, sdk.WheelTimer{Expires: j0 + 30, Placement: idle(1, 2, 3)}, "busy housekeeping CPU 0: stays"},
		{3, 2, sdk.WheelTimer{Expires: j0 + 40, Placement: idle(1, 2, 3)}, "idle CPU 2: stays or goes to busy CPU 0"},
		{4, 3, sdk.WheelTimer{Expires: j0 + 50, Placement: idle(1, 2)}, "nohz_full CPU 3: stays or goes to busy housekeeping CPU 0"},
		{5, 3, sdk.WheelTimer{Expires: j0 + 60, Flags: sdk.TimerPinned, Placement: idle(1, 2)}, "pinned on nohz_full CPU 3: stays"},
	}
	on := map[sdk.TimerID]int{}
	for _, s := range starts {
		s.tm.ID = s.id
		r := p.ModTimer(s.cpu, j0, s.tm)
		got := s.cpu
		if r.Moved {
			got = r.CPU
		}
		on[s.id] = got
		switch {
		case got < 0 || got >= tbPlaceCPUs:
			t.Fatalf("timer %d (%s): ModTimer put it on CPU %d, outside the machine", s.id, s.want, got)
		case s.tm.Flags&sdk.TimerPinned != 0 && got != s.cpu:
			t.Errorf("timer %d (%s): ModTimer put it on CPU %d", s.id, s.want, got)
		case s.cpu == 0 && got != 0:
			t.Errorf("timer %d (%s): ModTimer put it on CPU %d", s.id, s.want, got)
		case got != s.cpu && (s.tm.Placement.Idle.Has(got) || got == 3):
			t.Errorf("timer %d (%s): ModTimer moved it to CPU %d, which is idle or nohz_full", s.id, s.want, got)
		}
		if r.State.Split {
			in := r.State.GlobalNext
			if s.tm.Flags&sdk.TimerPinned != 0 {
				in = r.State.LocalNext
			}
			if in == sdk.NoExpiry || after64(in, s.tm.Expires+1) {
				t.Errorf("timer %d (%s): split State %+v does not hold it in its base", s.id, s.want, r.State)
			}
		}
	}
	// Split bases: the migrator's ExpireRemote of CPU 1 and CPU 3 at their
	// timers' expiry takes only the global ones.
	if rb, ok := p.(sdk.RemoteTimerBase); ok {
		st := p.ModTimer(1, j0, sdk.WheelTimer{ID: 1, Expires: j0 + 20, Flags: sdk.TimerPinned, Placement: idle(1, 2, 3)}).State
		if st.Split {
			r := rb.ExpireRemote(1, j0+200)
			if len(r.Expired) != 0 {
				t.Errorf("ExpireRemote(1) = %+v, ran a pinned (BASE_LOCAL) timer", r.Expired)
			}
			for _, cpu := range []int{2, 3} {
				r := rb.ExpireRemote(cpu, j0+200)
				for _, e := range r.Expired {
					if on[e.ID] != cpu || e.ID == 5 {
						t.Errorf("ExpireRemote(%d) ran timer %d, which is on CPU %d or pinned", cpu, e.ID, on[e.ID])
					}
					delete(on, e.ID)
				}
			}
		}
	}
	for cpu := 0; cpu < tbPlaceCPUs; cpu++ {
		r := tbRun(t, p, cpu, j0+200)
		for _, e := range r.Expired {
			want, ok := on[e.ID]
			if !ok || want != cpu {
				t.Errorf("RunTimers(%d) ran timer %d, which ModTimer put on CPU %d (or ran already)", cpu, e.ID, want)
			}
			delete(on, e.ID)
		}
	}
	if len(on) != 0 {
		t.Errorf("timers never expired: %v (id: CPU)", on)
	}
}

// tbCheckNoMigration: with kernel.timer_migration off (the suite's Setup) a
// new timer is queued on the calling CPU, whatever the placement says.
func tbCheckNoMigration(t *testing.T, p sdk.TimerBase, j0 uint64) {
	r := p.ModTimer(1, j0, sdk.WheelTimer{ID: 1, Expires: j0 + 10, Placement: idle(1)})
	if r.Moved && r.CPU != 1 {
		t.Errorf("ModTimer(1) without timer_migration moved the timer to CPU %d", r.CPU)
	}
}

func after64(a, b uint64) bool { return int64(b-a) < 0 }

// hrCheckPlacement checks where Start queues an hrtimer while
// kernel.timer_migration is on (switch_hrtimer_base()), on a 3-CPU machine
// at HZ 250 in high-res mode with CPU 2 nohz_full and CPU 0 busy with a
// pinned timer 4 ms ahead:
//
//   - an HRTIMER_MODE_PINNED timer stays on the calling CPU;
//   - a timer started on a busy housekeeping CPU stays there;
//   - a timer that moves goes to a busy housekeeping CPU, expires there
//     only, writes no device on the call (the target is never reprogrammed
//     remotely), and expires no earlier than the target's next event
//     before the call (hrtimer_check_target());
//   - a timer due before the target's next event stays local.
func hrCheckPlacement(t *testing.T, newPlugin func(*testing.T) sdk.HRTimerBase) {
	p := newPlugin(t)
	cfg := mustDefaults(t, p.Schema())
	hk := sdk.CPUSet{0b011}
	s := sdk.Setup{CPUs: 3, HZ: 250, HighRes: true, Seed: 1, TimerMigration: true, TimerHousekeeping: &hk}
	if d := p.Configure(s, cfg); d.HasErrors() {
		t.Fatalf("Configure(defaults, timer_migration) = %v", d)
	}
	ms := func(n int64) ktime.Time { return ktime.Time(n * ktime.Millisecond) }
	mono := func(id sdk.TimerID, mode sdk.HRMode, pl *sdk.Placement) sdk.HRTimer {
		return sdk.HRTimer{ID: id, Clock: sdk.ClockMonotonic, Mode: mode, Placement: pl}
	}
	if r := p.Start(0, 0, mono(1, sdk.HRModeAbs|sdk.HRModePinned, nil), ms(4), 0); r.Moved {
		t.Fatalf("pinned timer on CPU 0 moved: %+v", r)
	}
	next0 := p.NextEvent(0, 0, 0)
	cases := []struct {
		id      sdk.TimerID
		cpu     int
		mode    sdk.HRMode
		expires ktime.Time
		idle    *sdk.Placement
		rule    string
	}{
		{2, 1, sdk.HRModeAbs | sdk.HRModePinned, ms(20), idle(1, 2), "pinned on idle CPU 1: stays"},
		{3, 1, sdk.HRModeAbs, ms(20), idle(2), "busy housekeeping CPU 1: stays"},
		{4, 1, sdk.HRModeAbs, ms(20), idle(1, 2), "idle CPU 1, after CPU 0's next event: stays or goes to CPU 0"},
		{5, 2, sdk.HRModeAbs, ms(30), idle(1), "busy nohz_full CPU 2: stays or goes to CPU 0"},
		{6, 1, sdk.HRModeAbs, ms(2), idle(1, 2), "idle CPU 1, before CPU 0's next event: stays"},
	}
	on := map[sdk.TimerID]int{1: 0}
	exp := map[sdk.TimerID]ktime.Time{1: ms(4)}
	for _, c := range cases {
		r := p.Start(c.cpu, ms(1), mono(c.id, c.mode, c.idle), c.expires, 0)
		got := c.cpu
		if r.Moved {
			got = r.CPU
		}
		on[c.id], exp[c.id] = got, c.expires
		switch {
		case got < 0 || got >= 3:
			t.Fatalf("timer %d (%s): Start put it on CPU %d, outside the machine", c.id, c.rule, got)
		case got == c.cpu:
		case c.mode&sdk.HRModePinned != 0 || c.id == 3 || c.id == 6:
			t.Errorf("timer %d (%s): Start put it on CPU %d", c.id, c.rule, got)
		case c.idle.Idle.Has(got) || got == 2:
			t.Errorf("timer %d (%s): moved to CPU %d, which is idle or nohz_full", c.id, c.rule, got)
		case len(r.Program) != 0:
			t.Errorf("timer %d (%s): moved to CPU %d but the call wrote the device: %v", c.id, c.rule, got, r.Program)
		case got == 0 && c.expires < next0:
			t.Errorf("timer %d (%s): moved to CPU 0 although it expires before CPU 0's next event %d", c.id, c.rule, next0)
		}
	}
	// Each expires once, on the CPU Start said: each CPU's interrupt at
	// every expiry, in time order.
	var times []ktime.Time
	for _, e := range exp {
		times = append(times, e)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	for _, at := range times {
		for cpu := 0; cpu < 3; cpu++ {
			for _, e := range p.Interrupt(cpu, at).Expired {
				if want, ok := on[e.ID]; !ok || want != cpu {
					t.Errorf("CPU %d's interrupt at %d expired timer %d, which Start put on CPU %d (or ran already)", cpu, at, e.ID, want)
				}
				delete(on, e.ID)
			}
		}
	}
	if len(on) != 0 {
		t.Errorf("timers never expired: %v (id: CPU)", on)
	}
}
