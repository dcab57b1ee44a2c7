package governor

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

var states = []sdk.CPUIdleState{
	{Name: "POLL", Polling: true},
	{Name: "C1", ExitLatency: 2000, TargetResidency: 2000},
	{Name: "C6", ExitLatency: 133000, TargetResidency: 600000, StopsLocalTimer: true},
}

func newGov(t *testing.T, f func() sdk.Plugin) sdk.Governor {
	t.Helper()
	g := f().(sdk.Governor)
	if d := g.Configure(sdk.Setup{CPUs: 1, HZ: 1000, HighRes: true}, sdk.Config{"select_cost": "0"}); d.HasErrors() {
		t.Fatal(d)
	}
	g.Enable(0, states)
	return g
}

func req(sleep, delta int64, stopped bool, qos int64) sdk.IdleSelect {
	return sdk.IdleSelect{SleepLength: sleep, DeltaTick: delta, TickStopped: stopped, LatencyReq: qos, TickNsec: 1000000}
}

// TestFirstSelections: the rules of a fresh menu, teo and always_stop, before
// any history: PM QoS 0 polls (menu and teo keep the tick for it); a sleep
// shorter than C1's residency polls with the tick kept; a 10 ms sleep with
// the tick stopped picks C6; a 300 us sleep with the tick running gives teo C1
// and the tick kept (under a tick), while a fresh menu polls: its interval
// history starts at zeros, whose typical interval is 0 (get_typical_interval()
// on a memset menu_device); always_stop always stops the tick.
func TestFirstSelections(t *testing.T) {
	none := sdk.NoLatencyLimit
	for _, tc := range []struct {
		name   string
		r      sdk.IdleSelect
		menu   sdk.IdleChoice
		teo    sdk.IdleChoice
		always sdk.IdleChoice
	}{
		{"qos 0", req(10000000, 10000000, false, 0), sdk.IdleChoice{State: 0}, sdk.IdleChoice{State: 0}, sdk.IdleChoice{State: 0, StopTick: true}},
		{"1 us", req(1000, 1000, false, none), sdk.IdleChoice{State: 0}, sdk.IdleChoice{State: 0}, sdk.IdleChoice{State: 0, StopTick: true}},
		{"10 ms stopped", req(10000000, 10000000, true, none), sdk.IdleChoice{State: 2, StopTick: true}, sdk.IdleChoice{State: 2, StopTick: true}, sdk.IdleChoice{State: 2, StopTick: true}},
		{"300 us ticking", req(300000, 300000, false, none), sdk.IdleChoice{State: 0}, sdk.IdleChoice{State: 1}, sdk.IdleChoice{State: 1, StopTick: true}},
		{"qos 10 us", req(10000000, 800000, false, 10000), sdk.IdleChoice{State: 0}, sdk.IdleChoice{State: 1, StopTick: true}, sdk.IdleChoice{State: 1, StopTick: true}},
	} {
		for _, g := range []struct {
			name string
			f    func() sdk.Plugin
			want sdk.IdleChoice
		}{{"menu", MenuFactory.New, tc.menu}, {"teo", TeoFactory.New, tc.teo}, {"always_stop", AlwaysStopFactory.New, tc.always}} {
			if got := newGov(t, g.f).Select(tc.r); got != g.want {
				t.Errorf("%s %s: Select(%+v) = %+v, want %+v", g.name, tc.name, tc.r, got, g.want)
			}
		}
	}
}

// TestLearnsEarlyWakeups: a CPU whose 10 ms sleeps (the tick running) are
// always cut short after 50 us, by an interrupt rather than a timer, leads menu
// (correction factor and typical interval) and teo (intercepts) to C1 with
// the tick kept; always_stop has no history and keeps C6.
func TestLearnsEarlyWakeups(t *testing.T) {
	for _, g := range []struct {
		name string
		f    func() sdk.Plugin
		want int
	}{{"menu", MenuFactory.New, 1}, {"teo", TeoFactory.New, 1}, {"always_stop", AlwaysStopFactory.New, 2}} {
		gov := newGov(t, g.f)
		r := req(10000000, 1000000, false, sdk.NoLatencyLimit)
		var last sdk.IdleChoice
		for range 40 {
			last = gov.Select(r)
			gov.Reflect(sdk.IdleReflect{State: last.State, Residency: 50000, Span: 51000})
		}
		if last.State != g.want {
			t.Errorf("%s: after 40 early wakeups Select = state %d, want %d", g.name, last.State, g.want)
		}
	}
}
