package governor

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

var haltpollStates = []sdk.CPUIdleState{{Name: "POLL", Polling: true}, {Name: "haltpoll", ExitLatency: 1000, TargetResidency: 1000}}

func newHaltpoll(t *testing.T, pollNS string) *Haltpoll {
	t.Helper()
	g := HaltpollFactory.New().(*Haltpoll)
	cfg := sdk.Config{"select_cost": "0", "guest_halt_poll_ns": pollNS, "guest_halt_poll_grow_start": "50000",
		"guest_halt_poll_grow": "2", "guest_halt_poll_shrink": "2", "guest_halt_poll_allow_shrink": "true"}
	if d := g.Configure(sdk.Setup{CPUs: 1, HZ: 250, HighRes: true}, cfg); d.HasErrors() {
		t.Fatal(d)
	}
	g.Enable(0, haltpollStates)
	return g
}

// TestHaltpoll walks haltpoll_select() and adjust_poll_limit() through a
// sequence of idle periods: each step's PM QoS request, the choice, then the
// residency reflected and the poll window after it.
func TestHaltpoll(t *testing.T) {
	none := sdk.NoLatencyLimit
	type step struct {
		qos       int64
		want      sdk.IdleChoice
		residency int64
		window    int64 // dev->poll_limit_ns after Reflect
	}
	for _, tc := range []struct {
		name   string
		pollNS string
		steps  []step
	}{
		{"guest_halt_poll_ns=0 never polls", "0", []step{
			{none, sdk.IdleChoice{State: 1, StopTick: true}, 30000, 0},
			{none, sdk.IdleChoice{State: 1, StopTick: true}, 5000000, 0},
		}},
		{"PM QoS 0 polls with the tick kept", "0", []step{
			{0, sdk.IdleChoice{State: 0}, 30000, 0},
			{none, sdk.IdleChoice{State: 1, StopTick: true}, 30000, 0},
		}},
		{"a short halt opens the window at grow_start, then it grows and shrinks", "200000", []step{
			{none, sdk.IdleChoice{State: 1, StopTick: true}, 30000, 50000}, // closed: halt; 30 us <= 200 us: open at 50 us
			{none, sdk.IdleChoice{State: 0}, 20000, 50000},                 // open: poll, keep the tick; a poll changes nothing
			{none, sdk.IdleChoice{State: 0}, 20000, 50000},                 // after a poll, poll again (no time limit modelled)
			{none, sdk.IdleChoice{State: 0}, 20000, 50000},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newHaltpoll(t, tc.pollNS)
			for i, s := range tc.steps {
				got := g.Select(sdk.IdleSelect{CPU: 0, SleepLength: 4000000, DeltaTick: 4000000, LatencyReq: s.qos, TickNsec: 4000000})
				if got != s.want {
					t.Fatalf("step %d: Select = %+v, want %+v", i, got, s.want)
				}
				g.Reflect(sdk.IdleReflect{CPU: 0, State: got.State, Residency: s.residency})
				if w := g.cpu[0].pollLimit; w != s.window {
					t.Fatalf("step %d: window %d ns, want %d", i, w, s.window)
				}
			}
		})
	}
}

// TestHaltpollAdjust is adjust_poll_limit() on halts alone: growth doubles
// from grow_start up to guest_halt_poll_ns; a halt past it halves the window.
func TestHaltpollAdjust(t *testing.T) {
	g := newHaltpoll(t, "200000")
	for i, tc := range []struct{ residency, window int64 }{
		{60000, 50000},   // 60 > 0: max(0*2, 50) = 50 us
		{70000, 100000},  // 70 > 50: 100 us
		{150000, 200000}, // 150 > 100: 200 us (the cap)
		{190000, 200000}, // 190 <= 200: no growth
		{500000, 100000}, // past 200 us: halve
		{500000, 50000},  //
		{40000, 50000},   // 40 < 50: unchanged
	} {
		g.Reflect(sdk.IdleReflect{CPU: 0, State: 1, Residency: tc.residency})
		if w := g.cpu[0].pollLimit; w != tc.window {
			t.Fatalf("step %d: residency %d: window %d, want %d", i, tc.residency, w, tc.window)
		}
	}
}
