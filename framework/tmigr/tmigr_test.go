package tmigr

import (
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestSetupGroups: tmigr_setup_groups() with TMIGR_CHILDREN_PER_GROUP = 8 on
// one node: 8 CPUs make one level, 9 and 64 two, 65 three.
func TestSetupGroups(t *testing.T) {
	for _, c := range []struct{ cpus, levels, groups0 int }{{1, 1, 1}, {8, 1, 1}, {9, 2, 2}, {64, 2, 8}, {65, 3, 9}} {
		h := New(c.cpus)
		if h.Levels() != c.levels || len(h.levels[0]) != c.groups0 {
			t.Errorf("New(%d): %d levels, %d level-0 groups; want %d, %d", c.cpus, h.Levels(), len(h.levels[0]), c.levels, c.groups0)
		}
		for cpu := 0; cpu < c.cpus; cpu++ {
			if h.Idle(cpu) {
				t.Errorf("New(%d): CPU %d starts idle, want active (tmigr_cpu_online())", c.cpus, cpu)
			}
		}
		if m := h.Migrator(0); m != 0 {
			t.Errorf("New(%d): migrator of CPU 0's group = %d, want CPU 0", c.cpus, m)
		}
	}
}

// TestMigratorHandOver follows tmigr_inactive_up()/tmigr_active_up(): the
// migrator that goes idle hands the role to the lowest active child
// (find_first_bit); a CPU becoming active in a group without migrator takes
// it.
func TestMigratorHandOver(t *testing.T) {
	h := New(8)
	h.Deactivate(0, ktime.Max)
	if m := h.Migrator(0); m != 1 {
		t.Errorf("after CPU 0 idles: migrator CPU %d, want 1", m)
	}
	for c := 1; c < 8; c++ {
		h.Deactivate(c, ktime.Max)
	}
	if m := h.Migrator(0); m != -1 {
		t.Errorf("all idle: migrator CPU %d, want none", m)
	}
	h.Activate(5)
	if m := h.Migrator(0); m != 5 {
		t.Errorf("CPU 5 wakes in a group without migrator: migrator CPU %d, want 5", m)
	}
	h.Activate(2)
	if m := h.Migrator(0); m != 5 {
		t.Errorf("CPU 2 wakes: migrator CPU %d, want 5 still", m)
	}
}

// TestGlobalTimerExpiredByMigrator follows a global timer of an idle CPU
// through the hierarchy (64 CPUs, two levels): CPU 10 goes idle with a
// global timer at 5 ms (tmigr_cpu_deactivate()); its level-0 group (CPUs
// 8-15) still has active CPUs, so CPU 8, that group's migrator, sees it due
// at 5 ms from its tick (tmigr_requires_handle_remote()) and expires it
// (tmigr_handle_remote() -> timer_expire_remote(10)); CPU 0, in another
// group, never does.
func TestGlobalTimerExpiredByMigrator(t *testing.T) {
	h := New(64)
	if first := h.Deactivate(10, ms(5)); first != ktime.Max {
		t.Fatalf("Deactivate(10) = %d, want ktime.Max (other CPUs are active)", first)
	}
	if h.RequiresHandleRemote(8, ms(4)) {
		t.Errorf("CPU 8 asked to handle remote timers at 4 ms, before the 5 ms event")
	}
	if !h.RequiresHandleRemote(8, ms(5)) {
		t.Errorf("CPU 8, migrator of CPUs 8-15, not asked to handle CPU 10's event at 5 ms")
	}
	if h.RequiresHandleRemote(0, ms(5)) || h.RequiresHandleRemote(9, ms(5)) {
		t.Errorf("CPU 0 (other group) or CPU 9 (not the migrator) asked to handle CPU 10's event")
	}
	var asked []int
	got := h.HandleRemote(8, ms(5), func(cpu int) ktime.Time {
		asked = append(asked, cpu)
		return ms(9) // its next global timer
	})
	if !slices.Equal(got, []int{10}) || !slices.Equal(asked, []int{10}) {
		t.Fatalf("HandleRemote(8) expired %v (asked %v), want [10]", got, asked)
	}
	if h.RequiresHandleRemote(8, ms(6)) || !h.RequiresHandleRemote(8, ms(9)) {
		t.Errorf("CPU 10's requeued 9 ms event not seen by its migrator at 9 ms only")
	}
	// CPU 10 wakes: its event is ignored from now on.
	h.Activate(10)
	if h.RequiresHandleRemote(8, ms(10)) {
		t.Errorf("CPU 10 is active again but its event is still handled remotely")
	}
}

// TestIdleGroupEventGoesUp: when a whole level-0 group is idle its first
// event goes to the top group, whose migrator (the group with CPU 0) expires
// it; the first CPU of that group handles it.
func TestIdleGroupEventGoesUp(t *testing.T) {
	h := New(16)
	for c := 8; c < 16; c++ {
		ev := ktime.Max
		if c == 12 {
			ev = ms(3)
		}
		h.Deactivate(c, ev)
	}
	if !h.RequiresHandleRemote(0, ms(3)) {
		t.Fatalf("CPU 0 (migrator up to the top) not asked for idle group 8-15's event")
	}
	if h.RequiresHandleRemote(1, ms(3)) {
		t.Errorf("CPU 1 is not its group's migrator but was asked")
	}
	got := h.HandleRemote(0, ms(3), func(int) ktime.Time { return ktime.Max })
	if !slices.Equal(got, []int{12}) {
		t.Errorf("HandleRemote(0) expired %v, want [12]", got)
	}
}

// TestLastCPUGetsFirstEvent: the last CPU to go idle drops every migrator
// duty and gets the hierarchy's first event back (tmigr_update_events() at
// the top with TMIGR_NONE); woken for it, it expires it remotely.
func TestLastCPUGetsFirstEvent(t *testing.T) {
	h := New(8)
	h.Deactivate(3, ms(7))
	for c := 0; c < 7; c++ {
		if c != 3 {
			if first := h.Deactivate(c, ktime.Max); first != ktime.Max {
				t.Fatalf("Deactivate(%d) = %d with CPU 7 still active", c, first)
			}
		}
	}
	if first := h.Deactivate(7, ktime.Max); first != ms(7) {
		t.Fatalf("last CPU's Deactivate = %d, want CPU 3's 7 ms event", first)
	}
	if h.RequiresHandleRemote(7, ms(6)) || !h.RequiresHandleRemote(7, ms(7)) {
		t.Errorf("idle CPU 7 not woken for the hierarchy at exactly 7 ms (tmc->wakeup)")
	}
	if got := h.HandleRemote(7, ms(7), func(int) ktime.Time { return ktime.Max }); !slices.Equal(got, []int{3}) {
		t.Errorf("HandleRemote(7) = %v, want [3]", got)
	}
}

// TestDeterministic: the same calls give the same answers and walks.
func TestDeterministic(t *testing.T) {
	run := func() ([]int, int64) {
		h := New(64)
		var out []int
		for i := 0; i < 2000; i++ {
			c := (i * 37) % 64
			now := ms(i)
			if h.Idle(c) {
				h.Activate(c)
			} else {
				h.Deactivate(c, now+ms((i*13)%7))
			}
			for m := 0; m < 64; m += 9 {
				if !h.Idle(m) && h.RequiresHandleRemote(m, now) {
					out = append(out, h.HandleRemote(m, now, func(int) ktime.Time { return ktime.Max })...)
				}
			}
		}
		return out, h.Walks
	}
	a, wa := run()
	b, wb := run()
	if !slices.Equal(a, b) || wa != wb || len(a) == 0 {
		t.Errorf("runs differ or expire nothing: %d/%d expiries, %d/%d walks", len(a), len(b), wa, wb)
	}
}

func ms(n int) ktime.Time { return ktime.Time(int64(n) * ktime.Millisecond) }
