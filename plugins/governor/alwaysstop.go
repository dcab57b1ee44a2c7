package governor

import "github.com/tickemu/tickemu/framework/sdk"

// AlwaysStop is the 3.10-era idle loop as a governor: cpu_idle_loop() called
// tick_nohz_idle_enter(), which stopped the tick whenever NO_HZ allowed, before
// cpuidle_idle_call() asked the governor for a state; the governor could not
// keep the tick. The state is the deepest one whose target residency fits the
// sleep length and whose exit latency meets the PM QoS limit.
type AlwaysStop struct{ base }

// AlwaysStopFactory declares the always_stop governor.
var AlwaysStopFactory = factory("always_stop",
	"3.10-era idle loop: the tick is stopped on every idle entry; the deepest state fitting the sleep length and PM QoS",
	func(b base) sdk.Plugin { return &AlwaysStop{b} })

var _ sdk.Governor = (*AlwaysStop)(nil)

// Configure implements sdk.Plugin.
func (g *AlwaysStop) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics { return g.configure(s, c) }

// Counters implements sdk.Plugin.
func (g *AlwaysStop) Counters() []sdk.Counter { return g.counters() }

// Enable implements sdk.Governor.
func (g *AlwaysStop) Enable(cpu int, states []sdk.CPUIdleState) { g.enable(cpu, states) }

// Select implements sdk.Governor.
func (g *AlwaysStop) Select(r sdk.IdleSelect) sdk.IdleChoice {
	st := g.cpuStates(r.CPU)
	idx := 0
	for i := len(st) - 1; i > 0; i-- {
		if st[i].TargetResidency <= r.SleepLength && st[i].ExitLatency <= r.LatencyReq {
			idx = i
			break
		}
	}
	return g.answer(r.CPU, idx, true)
}

// Reflect implements sdk.Governor: the choice depends on nothing past.
func (g *AlwaysStop) Reflect(sdk.IdleReflect) {}
