package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

func idleCPUs(cpus ...int) *sdk.Placement {
	p := &sdk.Placement{}
	for _, c := range cpus {
		p.Idle.Put(c, true)
	}
	return p
}

// TestPlacement follows an hrtimer through switch_hrtimer_base()
// (kernel/time/hrtimer.c) on a 3-CPU machine with kernel.timer_migration on
// and CPU 2 nohz_full: get_target_base() proposes get_nohz_timer_target()'s
// CPU unless the mode is HRTIMER_MODE_PINNED, and hrtimer_check_target()
// (hrtimer_suitable_target() from 6.14) keeps the timer local when it would
// expire before the target's expires_next. CPU 0 is busy with its tick
// programmed for 1 ms.
func TestPlacement(t *testing.T) {
	cases := []struct {
		name    string
		cpu     int
		mode    sdk.HRMode
		expires ktime.Time
		idle    *sdk.Placement
		want    int
	}{
		{"idle CPU 1, 10 ms: pushed to busy CPU 0 (expires after its 1 ms event)", 1, sdk.HRModeAbs, at(10 * ms), idleCPUs(1, 2), 0},
		{"idle CPU 1, 500 us: before CPU 0's expires_next, stays local", 1, sdk.HRModeAbs, at(500 * us), idleCPUs(1, 2), 1},
		{"idle CPU 1, exactly CPU 0's expires_next: pushed", 1, sdk.HRModeAbs, at(1 * ms), idleCPUs(1, 2), 0},
		{"pinned on idle CPU 1 stays", 1, sdk.HRModeAbs | sdk.HRModePinned, at(10 * ms), idleCPUs(1, 2), 1},
		{"busy nohz_full CPU 2 pushes to housekeeping CPU 0", 2, sdk.HRModeAbs, at(10 * ms), idleCPUs(1), 0},
		{"busy housekeeping CPU 1 keeps it", 1, sdk.HRModeAbs, at(10 * ms), idleCPUs(2), 1},
		{"every CPU idle: idle CPU 1 keeps it (default_cpu)", 1, sdk.HRModeAbs, at(10 * ms), idleCPUs(0, 1, 2), 1},
	}
	for _, c := range cases {
		hk := sdk.CPUSet{0b011}
		s := highRes(3)
		s.TimerMigration, s.TimerHousekeeping = true, &hk
		p := configure(t, s, zeroCosts())
		// CPU 0's tick: its device is programmed for 1 ms.
		if r := p.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeAbs | sdk.HRModePinned}, at(1*ms), 0); r.Moved {
			t.Fatalf("%s: pinned tick moved: %+v", c.name, r)
		}
		ht := sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, Mode: c.mode, Placement: c.idle}
		r := p.Start(c.cpu, at(100*us), ht, c.expires, 0)
		got := c.cpu
		if r.Moved {
			got = r.CPU
		}
		if got != c.want {
			t.Errorf("%s: Start on CPU %d queued it on CPU %d, want %d (%+v)", c.name, c.cpu, got, c.want, r)
			continue
		}
		if got != c.cpu && len(r.Program) != 0 {
			t.Errorf("%s: a timer moved to CPU %d wrote the calling CPU's device: %v", c.name, got, r.Program)
		}
		if got == c.cpu && c.cpu != 0 && (len(r.Program) != 1 || r.Program[0] != c.expires) {
			t.Errorf("%s: local first timer on CPU %d programmed %v, want [%d]", c.name, c.cpu, r.Program, c.expires)
		}
		// It expires on the CPU it was queued on, and only there.
		for cpu := 0; cpu < 3; cpu++ {
			n := 0
			for _, e := range interrupt(p, cpu, c.expires).Expired {
				if e.ID == 2 {
					n++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[cpu == c.want]; n != want {
				t.Errorf("%s: CPU %d's interrupt at %d expired timer 2 %d times, want %d", c.name, cpu, c.expires, n, want)
			}
		}
	}
}

// TestPlacementOff: without kernel.timer_migration (timers_migration_enabled
// off) get_target_base() returns the calling CPU's base.
func TestPlacementOff(t *testing.T) {
	p := configure(t, highRes(2), zeroCosts())
	p.Start(0, 0, hard(1), at(1*ms), 0)
	r := p.Start(1, 0, sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, Placement: idleCPUs(1)}, at(10*ms), 0)
	if r.Moved {
		t.Errorf("Start(1) without timer_migration = %+v, want it on CPU 1", r)
	}
}
