package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// migrWheel is a 4-CPU wheel at HZ 1000 with kernel.timer_migration on and
// CPU 3 nohz_full (housekeeping_cpumask(HK_TYPE_TIMER) = 0-2).
func migrWheel(t *testing.T, kv ...string) *Wheel {
	t.Helper()
	hk := sdk.CPUSet{0b0111}
	return newWheelSetup(t, sdk.Setup{CPUs: 4, HZ: 1000, Seed: 1, TimerMigration: true, TimerHousekeeping: &hk}, kv...)
}

func idleSet(cpus ...int) *sdk.Placement {
	p := &sdk.Placement{}
	for _, c := range cpus {
		p.Idle.Put(c, true)
	}
	return p
}

// TestPlacementPush follows a timer through the push model of
// kernel/time/timer.c:__mod_timer() -> get_target_base() ->
// kernel/sched/core.c:get_nohz_timer_target() (4.x-6.8): a busy housekeeping
// CPU keeps its timer; an idle one gives it to the first busy housekeeping
// CPU, or keeps it when every CPU is idle (default_cpu = this CPU); a
// nohz_full CPU gives it away even when busy, to the first housekeeping CPU
// (housekeeping_any_cpu()) when all are idle; TIMER_PINNED always stays; and
// the 3.10 cascade wheel looks for a target only from an idle CPU, with no
// housekeeping mask.
func TestPlacementPush(t *testing.T) {
	cases := []struct {
		name   string
		layout string
		cpu    int
		flags  sdk.TimerFlags
		idle   *sdk.Placement
		want   int
	}{
		{"busy housekeeping CPU keeps it", "levels", 1, 0, idleSet(2, 3), 1},
		{"idle CPU pushes to the first busy housekeeping CPU", "levels", 1, 0, idleSet(0, 1, 3), 2},
		{"idle CPU, all idle: stays (default_cpu)", "levels", 2, 0, idleSet(0, 1, 2, 3), 2},
		{"busy nohz_full CPU pushes to a busy housekeeping CPU", "levels", 3, 0, idleSet(0, 2), 1},
		{"busy nohz_full CPU, housekeeping all idle: housekeeping_any_cpu", "levels", 3, 0, idleSet(0, 1, 2), 0},
		{"a busy nohz_full CPU is never a target", "levels", 1, 0, idleSet(0, 1, 2), 1},
		{"pinned on an idle CPU stays", "levels", 1, sdk.TimerPinned, idleSet(1, 3), 1},
		{"deferrable timers migrate too", "levels", 2, sdk.TimerDeferrable, idleSet(1, 2), 0},
		{"3.10: busy nohz_full CPU keeps it (no housekeeping test)", "cascade", 3, 0, idleSet(0, 1), 3},
		{"3.10: idle CPU pushes to the first busy CPU, nohz_full or not", "cascade", 1, 0, idleSet(0, 1, 2), 3},
	}
	for _, c := range cases {
		w := migrWheel(t, "layout", c.layout)
		r := w.ModTimer(c.cpu, 0, sdk.WheelTimer{ID: 7, Expires: 100, Flags: c.flags, Placement: c.idle})
		got := c.cpu
		if r.Moved {
			got = r.CPU
		}
		if got != c.want || r.State.Pending != 1 {
			t.Errorf("%s: ModTimer(cpu %d) = %+v: on CPU %d, want CPU %d with the timer pending there", c.name, c.cpu, r, got, c.want)
		}
		for cpu := 0; cpu < 4; cpu++ {
			n := len(w.RunTimers(cpu, 200).Expired)
			if want := map[bool]int{true: 1, false: 0}[cpu == c.want]; n != want {
				t.Errorf("%s: RunTimers(%d) expired %d timers, want %d", c.name, cpu, n, want)
			}
		}
	}
}

// TestPlacementOff: with kernel.timer_migration = 0 (timers_migration_enabled
// off) get_target_base() is get_timer_this_cpu_base(): the calling CPU.
func TestPlacementOff(t *testing.T) {
	w := newWheelSetup(t, sdk.Setup{CPUs: 4, HZ: 1000, Seed: 1})
	if r := w.ModTimer(1, 0, sdk.WheelTimer{ID: 7, Expires: 100, Placement: idleSet(1, 2, 3)}); r.Moved {
		t.Errorf("ModTimer(1) without timer_migration = %+v, want it on CPU 1", r)
	}
}

// TestPlacementPull follows a timer through the 6.9+ pull model:
// get_timer_this_cpu_base() queues it locally, in BASE_GLOBAL unless pinned
// (BASE_LOCAL); the state splits tevt.local and tevt.global as
// fetch_next_timer_interrupt() does; timer_expire_remote() runs only
// BASE_GLOBAL of the idle CPU, for the migrator; the CPU's own softirq then
// finds only the pinned timer.
func TestPlacementPull(t *testing.T) {
	w := migrWheel(t, "migration", "pull")
	r := w.ModTimer(2, 0, sdk.WheelTimer{ID: 1, Expires: 100, Placement: idleSet(0, 1, 2, 3)})
	if r.Moved || !r.State.Split || r.State.GlobalNext != 104 || r.State.LocalNext != sdk.NoExpiry {
		t.Fatalf("ModTimer(2, global) = %+v, want it local in BASE_GLOBAL, GlobalNext 104 (level 1)", r)
	}
	r = w.ModTimer(2, 0, sdk.WheelTimer{ID: 2, Expires: 300, Flags: sdk.TimerPinned})
	if r.Moved || r.State.LocalNext != 304 || r.State.GlobalNext != 104 || r.State.NextExpiry != 104 {
		t.Fatalf("ModTimer(2, pinned) = %+v, want LocalNext 304, GlobalNext 104, NextExpiry 104", r)
	}
	if n := w.NextTimerInterrupt(2, 50); n.Next != 104 {
		t.Errorf("NextTimerInterrupt(2, 50).Next = %d, want 104 (the earlier of local and global)", n.Next)
	}
	if x := w.ExpireRemote(2, 103); len(x.Expired) != 0 {
		t.Errorf("ExpireRemote(2, 103) = %+v before the bucket expiry", x.Expired)
	}
	x := w.ExpireRemote(2, 150)
	if len(x.Expired) != 1 || x.Expired[0].ID != 1 || x.State.GlobalNext != sdk.NoExpiry || x.State.LocalNext != 304 {
		t.Fatalf("ExpireRemote(2, 150) = %+v, want timer 1 only, BASE_GLOBAL empty after", x)
	}
	if rr := w.RunTimers(2, 150); len(rr.Expired) != 0 {
		t.Errorf("RunTimers(2, 150) = %+v, want nothing (timer 1 ran remotely, timer 2 not due)", rr.Expired)
	}
	if rr := w.RunTimers(2, 310); len(rr.Expired) != 1 || rr.Expired[0].ID != 2 {
		t.Errorf("RunTimers(2, 310) = %+v, want the pinned timer 2", rr.Expired)
	}
	c := counter(w.Counters(), "remote_expiries", 2)
	if c != 1 {
		t.Errorf("remote_expiries on CPU 2 = %d, want 1", c)
	}
}

// TestPullNeedsLevels: the cascade wheel has no BASE_GLOBAL.
func TestPullNeedsLevels(t *testing.T) {
	w := New().(*Wheel)
	d := w.Configure(sdk.Setup{CPUs: 2, HZ: 1000}, defaults(t, sdk.Config{"layout": "cascade", "migration": "pull"}))
	if !d.HasErrors() || d[0].Attribute != "migration" {
		t.Errorf("Configure(cascade, pull) = %v, want an error on migration", d)
	}
}

func counter(cs []sdk.Counter, name string, cpu int) int64 {
	for _, c := range cs {
		if c.Name == name && c.CPU == cpu {
			return c.Value
		}
	}
	return -1
}

// TestPullEmptyBaseNextExpiry: in the 6.9+ pull model an idle entry moves
// an empty base's next_expiry to jiffies + NEXT_TIMER_MAX_DELTA
// (next_timer_interrupt()), so a timer clamped to WHEEL_TIMEOUT_MAX on a
// base that was empty for a long time is still recorded as pending. The
// plugin kept clk + NEXT_TIMER_MAX_DELTA from the base's first clock, the
// clamped timer's bucket expiry was past it, and the base reported no
// pending timer (a mismatch oracle/wheeldiff found against 6.12's timer.c).
func TestPullEmptyBaseNextExpiry(t *testing.T) {
	const hz = 250
	w := newWheel(t, hz, 2, attrMigration, "pull")
	j0 := ktime.InitialJiffies(hz)
	w.RunTimers(0, j0)
	j1 := j0 + 20_000_000 // past NEXT_TIMER_MAX_DELTA - WHEEL_TIMEOUT_MAX (16.8M jiffies)
	w.NextTimerInterrupt(0, j1)
	if got := w.Bases(0)[0].NextExpiry; got != j1+nextTimerMaxDelta {
		t.Fatalf("empty BASE_LOCAL next_expiry after idle entry = j1%+d, want j1+NEXT_TIMER_MAX_DELTA", int64(got-j1))
	}
	r := w.ModTimer(0, j1, sdk.WheelTimer{ID: 1, Expires: j1 + 2_000_000_000, Flags: sdk.TimerPinned})
	if r.State.LocalNext != r.BucketExpiry || !w.Bases(0)[0].TimersPending {
		t.Errorf("clamped timer at bucket j1%+d: LocalNext %d, timers_pending %v; want the bucket expiry and true",
			int64(r.BucketExpiry-j1), int64(r.State.LocalNext-j1), w.Bases(0)[0].TimersPending)
	}
}

// TestPullEveryTickRaise: the every_tick raise rule on the pull model's
// bases (a hybrid no release had: every_tick ended in 5.8, the pull model
// came in 6.9) tests every base's clock, as 6.9+ run_local_timers() loops
// over all of them. After a softirq collected BASE_LOCAL and BASE_DEF at
// j, their clocks are j+1 while BASE_GLOBAL, forwarded to j with nothing
// due, still raises at j. oracle/wheeldiff found the difference against
// 6.12's timer.c with d4f7dae87096 reverted.
func TestPullEveryTickRaise(t *testing.T) {
	const hz = 250
	w := newWheel(t, hz, 1, attrMigration, "pull", attrRaise, "every_tick")
	j := ktime.InitialJiffies(hz) + 100
	w.ModTimer(0, j, sdk.WheelTimer{ID: 1, Expires: j + 5000})
	w.ModTimer(0, j, sdk.WheelTimer{ID: 2, Expires: j + 1, Flags: sdk.TimerPinned})
	w.ModTimer(0, j, sdk.WheelTimer{ID: 3, Expires: j + 1, Flags: sdk.TimerDeferrable})
	j += 2
	w.ModTimer(0, j, sdk.WheelTimer{ID: 1, Expires: j + 6000}) // forwards BASE_GLOBAL to j
	r := w.RunTimers(0, j)
	if len(r.Expired) != 2 {
		t.Fatalf("RunTimers expired %v, want timers 2 and 3", r.Expired)
	}
	if b := w.Bases(0); b[0].Clk != j+1 || b[1].Clk != j || b[2].Clk != j+1 {
		t.Fatalf("base clocks %d %d %d, want j+1 j j+1", int64(b[0].Clk-j), int64(b[1].Clk-j), int64(b[2].Clk-j))
	}
	if r.State.RaiseAt != j {
		t.Errorf("RaiseAt = j%+d, want j (BASE_GLOBAL's clock)", int64(r.State.RaiseAt-j))
	}
}
