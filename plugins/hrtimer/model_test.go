package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// TestHRTimerModelDeclared: the builtin declares its model in the mainline
// high-res state with only hard CLOCK_MONOTONIC timers, the queue in expiry
// order, and no model where the model does not describe it (low-res mode, the
// double-write restart, a soft or CLOCK_REALTIME timer queued, a pending hang).
func TestHRTimerModelDeclared(t *testing.T) {
	mono := func(id sdk.TimerID) sdk.HRTimer { return sdk.HRTimer{ID: id, Clock: sdk.ClockMonotonic} }
	for _, tc := range []struct {
		name  string
		setup sdk.Setup
		over  map[string]string
		start sdk.HRTimer
		valid bool
	}{
		{"mainline", highRes(1), nil, mono(3), true},
		{"lowres", lowRes(1, 1000), nil, mono(3), false},
		{"double-restart", highRes(1), map[string]string{"restart": "double"}, mono(3), false},
		{"soft", highRes(1), nil, sdk.HRTimer{ID: 3, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeSoft}, false},
		{"realtime", highRes(1), nil, sdk.HRTimer{ID: 3, Clock: sdk.ClockRealtime}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := configure(t, tc.setup, tc.over)
			p.Start(0, at(0), mono(1), at(5*ms), 0)
			p.Start(0, at(0), mono(2), at(2*ms), 0)
			p.Start(0, at(0), tc.start, at(9*ms), 0)
			m := p.HRTimerModel(0)
			if m.Valid != tc.valid {
				t.Fatalf("Valid = %v, want %v (%+v)", m.Valid, tc.valid, m)
			}
			if !tc.valid {
				return
			}
			want := []sdk.HRQueued{{ID: 2, Expires: at(2 * ms), SoftExpires: at(2 * ms)}, {ID: 1, Expires: at(5 * ms), SoftExpires: at(5 * ms)}, {ID: 3, Expires: at(9 * ms), SoftExpires: at(9 * ms)}}
			if len(m.Queue) != 3 || m.Queue[0] != want[0] || m.Queue[1] != want[1] || m.Queue[2] != want[2] ||
				m.NextTimer != 2 || m.ExpiresNext != at(2*ms) || m.StartCost != p.cfg.Costs.Start {
				t.Fatalf("model %+v, want queue %v, next timer 2 at 2 ms, start cost %d", m, want, p.cfg.Costs.Start)
			}
		})
	}
	t.Run("timer_migration", func(t *testing.T) {
		s := highRes(2)
		s.TimerMigration = true
		p := configure(t, s, nil)
		if m := p.HRTimerModel(0); !m.Valid || !m.Migrates {
			t.Fatalf("model %+v, want a valid one saying unpinned starts may migrate", m)
		}
	})
	t.Run("hang", func(t *testing.T) {
		p := configure(t, highRes(1), nil)
		p.cpus[0].hangDetected = true
		if p.HRTimerModel(0).Valid {
			t.Fatal("a model while a hang is pending")
		}
	})
}

// TestBaseIndex: hrtimer_clockid_to_base() with __hrtimer_setup()'s relative
// CLOCK_REALTIME rule and the soft half; unknown clock ids are MONOTONIC.
func TestBaseIndex(t *testing.T) {
	for _, c := range []struct {
		clock sdk.ClockID
		mode  sdk.HRMode
		want  int
	}{
		{sdk.ClockMonotonic, 0, baseMonotonic},
		{sdk.ClockRealtime, 0, baseRealtime},
		{sdk.ClockRealtime, sdk.HRModeRel, baseMonotonic},
		{sdk.ClockRealtime, sdk.HRModeRel | sdk.HRModeSoft, baseMonotonicSoft},
		{sdk.ClockRealtime, sdk.HRModePinned | sdk.HRModeSoft, baseRealtimeSoft},
		{sdk.ClockBoottime, sdk.HRModeRel, baseBoottime},
		{sdk.ClockTAI, sdk.HRModeSoft, baseTAISoft},
		{sdk.ClockID(5), 0, baseMonotonic},
		{sdk.ClockID(12), sdk.HRModeSoft, baseMonotonicSoft},
		{sdk.ClockID(-1), 0, baseMonotonic},
	} {
		if got := baseIndex(c.clock, c.mode); got != c.want {
			t.Errorf("baseIndex(%d, %#x) = %d, want %d", c.clock, c.mode, got, c.want)
		}
	}
}
