package sdktest

import (
	"math"
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/model"
)

// ceRoles are the clockevent block labels the suite configures a device for.
// A device that refuses a role in Configure (an error diagnostic) is skipped
// for that role: the LAPIC cannot be the broadcast device.
var ceRoles = []sdk.Role{sdk.RoleLocal, sdk.RoleBroadcast}

// ceSetup is the machine the suite configures devices for.
func ceSetup(role sdk.Role) sdk.Setup {
	return sdk.Setup{CPUs: 4, HZ: 250, HighRes: true, Seed: 1, Role: role}
}

// RunClockEventDevice runs the conformance suite for a sdk.ClockEventDevice.
// newPlugin returns a fresh, unconfigured plugin each time it is called; the
// suite configures it with the schema's defaults (decoded as the host does) for
// a 4-CPU, HZ=250 machine and Setup.Role = role. Roles whose Configure returns
// errors are skipped.
//
// It checks, for each role the device accepts: the schema is well formed
// (unique names, known types, documented, defaults that parse and lie in their
// OneOf list); Spec is valid after Configure (oneshot capable, positive
// frequency, 0 < min <= max ticks, per-CPU devices have one channel per CPU);
// a write of min_delta_ticks fires no earlier than that many ticks (less one
// tick of counter phase) and not absurdly late; the fire time is monotone in
// the tick count; shutdown, oneshot and oneshot_stopped transitions stop the
// device; periodic mode (if offered) ticks once per period; costs are never
// negative; Counters are stable; and two fresh instances given the same calls
// answer identically; a device that declares a sdk.DeadlineModel answers
// exactly as the model says.
func RunClockEventDevice(t *testing.T, newPlugin func(t *testing.T, role sdk.Role) sdk.ClockEventDevice) {
	t.Helper()
	accepted := 0
	defer func() {
		if accepted == 0 {
			t.Errorf("the device refuses every role (%v) with its default settings", ceRoles)
		}
	}()
	for _, role := range ceRoles {
		t.Run(string(role), func(t *testing.T) {
			p := newPlugin(t, role)
			ok := ceConfigure(t, p, role)
			if ok {
				accepted++
			}
			if !ok {
				// A device may refuse a role (a LAPIC cannot be the broadcast
				// device) as long as it says so with a diagnostic, which
				// ceConfigure checked; there is nothing more to test in it.
				t.Logf("%s refuses role %q", p.Info().Name, role)
				return
			}
			t.Run("Info", func(t *testing.T) { ceCheckInfo(t, p) })
			t.Run("Schema", func(t *testing.T) { checkSchema(t, p.Schema()) })
			t.Run("Spec", func(t *testing.T) { ceCheckSpec(t, p.Spec(), ceSetup(role)) })
			t.Run("MinDelta", func(t *testing.T) {
				p := ceFresh(t, newPlugin, role)
				ceCheckMinDelta(t, p)
			})
			t.Run("Monotone", func(t *testing.T) {
				p := ceFresh(t, newPlugin, role)
				ceCheckMonotone(t, p)
			})
			t.Run("States", func(t *testing.T) {
				p := ceFresh(t, newPlugin, role)
				ceCheckStates(t, p)
			})
			t.Run("Periodic", func(t *testing.T) {
				p := ceFresh(t, newPlugin, role)
				ceCheckPeriodic(t, p)
			})
			t.Run("DeadlineModel", func(t *testing.T) {
				p := ceFresh(t, newPlugin, role)
				ceCheckModel(t, p)
			})
			t.Run("Deterministic", func(t *testing.T) {
				a := ceScript(ceFresh(t, newPlugin, role))
				b := ceScript(ceFresh(t, newPlugin, role))
				if !reflect.DeepEqual(a, b) {
					t.Errorf("two fresh instances answered differently:\n%v\n%v", a, b)
				}
			})
			t.Run("Counters", func(t *testing.T) {
				p := ceFresh(t, newPlugin, role)
				ceScript(p)
				a, b := p.Counters(), p.Counters()
				if !reflect.DeepEqual(a, b) {
					t.Errorf("Counters() not stable: %v then %v", a, b)
				}
				for _, c := range a {
					if c.Name == "" || c.CPU < -1 {
						t.Errorf("Counter %+v: want a name and CPU >= -1", c)
					}
				}
			})
		})
	}
}

// ceFresh makes and configures a new instance.
func ceFresh(t *testing.T, newPlugin func(*testing.T, sdk.Role) sdk.ClockEventDevice, role sdk.Role) sdk.ClockEventDevice {
	t.Helper()
	p := newPlugin(t, role)
	if !ceConfigure(t, p, role) {
		t.Fatalf("Configure(role %q) failed on a fresh instance", role)
	}
	return p
}

// ceConfigure configures p with its schema defaults; false if it reports
// errors.
func ceConfigure(t *testing.T, p sdk.ClockEventDevice, role sdk.Role) bool {
	t.Helper()
	cfg := mustDefaults(t, p.Schema())
	d := p.Configure(ceSetup(role), cfg)
	if d.HasErrors() {
		t.Logf("Configure(role %q) = %v", role, d)
		return false
	}
	return true
}

func ceCheckInfo(t *testing.T, p sdk.ClockEventDevice) {
	i := p.Info()
	if i.Kind != sdk.KindClockEvent || i.Name == "" || i.Version == "" || i.Description == "" {
		t.Errorf("Info() = %+v, want kind %q, a name, version and description", i, sdk.KindClockEvent)
	}
}

func ceCheckSpec(t *testing.T, s sdk.DeviceSpec, setup sdk.Setup) {
	if s.Name == "" || s.Features&sdk.FeatOneshot == 0 || !(s.FreqHz > 0) || math.IsInf(s.FreqHz, 0) {
		t.Errorf("Spec() = %+v: want a name, FeatOneshot and a positive frequency", s)
	}
	if s.MinDeltaTicks == 0 || s.MaxDeltaTicks < s.MinDeltaTicks {
		t.Errorf("Spec() ticks [%d, %d]: want 0 < min <= max", s.MinDeltaTicks, s.MaxDeltaTicks)
	}
	if s.Channels < 1 {
		t.Errorf("Spec().Channels = %d, want >= 1", s.Channels)
	}
	if s.Features&sdk.FeatPerCPU != 0 && s.Channels != setup.CPUs {
		t.Errorf("per-CPU Spec().Channels = %d, want CPUs %d", s.Channels, setup.CPUs)
	}
	if s.Mult == 0 && s.Shift != 0 {
		t.Errorf("Spec() Shift %d without Mult", s.Shift)
	}
}

// ceTickNs is the length of n device ticks in ns (float, for bounds).
func ceTickNs(s sdk.DeviceSpec, n uint64) float64 { return float64(n) * 1e9 / s.FreqHz }

// ceNow is a quiet instant well after boot.
const ceNow = ktime.Time(10 * ktime.Millisecond)

func ceArm(t *testing.T, p sdk.ClockEventDevice, ch int, now ktime.Time) {
	t.Helper()
	if cost, _ := p.SetState(ch, now, sdk.StateShutdown, 0); cost < 0 {
		t.Errorf("SetState(%d, shutdown) cost %d < 0", ch, cost)
	}
	if cost, fire := p.SetState(ch, now, sdk.StateOneshot, 0); cost < 0 || fire != ktime.Max {
		t.Errorf("SetState(%d, oneshot) = (%d, %v), want cost >= 0 and no fire", ch, cost, fire)
	}
}

func ceCheckMinDelta(t *testing.T, p sdk.ClockEventDevice) {
	s := p.Spec()
	for _, ch := range ceChannels(s) {
		now := ceNow.Add(int64(ch) * 137) // vary the counter phase
		ceArm(t, p, ch, now)
		r := p.SetNextEvent(ch, now, s.MinDeltaTicks)
		if r.ETIME {
			t.Errorf("SetNextEvent(%d, %v, min %d) = -ETIME on a quiet device", ch, now, s.MinDeltaTicks)
			continue
		}
		if r.Cost < 0 {
			t.Errorf("SetNextEvent cost %d < 0", r.Cost)
		}
		got := float64(r.FireAt.Sub(now))
		lo := ceTickNs(s, s.MinDeltaTicks-1)
		hi := float64(r.Cost) + ceTickNs(s, s.MinDeltaTicks+2) + float64(ktime.Millisecond)
		if got < lo-1 || got > hi {
			t.Errorf("SetNextEvent(%d, %v, %d ticks) fires %.0f ns later, want in [%.0f, %.0f]", ch, now, s.MinDeltaTicks, got, lo, hi)
		}
	}
}

// ceChannels picks the channels to exercise: the first and the last.
func ceChannels(s sdk.DeviceSpec) []int {
	if s.Channels == 1 {
		return []int{0}
	}
	return []int{0, s.Channels - 1}
}

// ceTickSteps are tick counts from min_delta_ticks up to about 10 s of the
// device (or its max), in growing steps.
func ceTickSteps(s sdk.DeviceSpec) []uint64 {
	limit := s.MaxDeltaTicks
	if tenSec := uint64(10 * s.FreqHz); tenSec < limit {
		limit = tenSec
	}
	var out []uint64
	for k := s.MinDeltaTicks; k <= limit; k = k*2 + 1 {
		out = append(out, k)
		if k > math.MaxUint64/4 {
			break
		}
	}
	return append(out, limit)
}

func ceCheckMonotone(t *testing.T, p sdk.ClockEventDevice) {
	s := p.Spec()
	now := ceNow
	ceArm(t, p, 0, now)
	prev := ktime.Time(math.MinInt64)
	for _, k := range ceTickSteps(s) {
		r := p.SetNextEvent(0, now, k)
		if r.ETIME {
			t.Errorf("SetNextEvent(0, %v, %d) = -ETIME", now, k)
			continue
		}
		if r.FireAt < prev {
			t.Errorf("SetNextEvent(0, %v, %d ticks) fires at %v, before the fire of fewer ticks %v", now, k, r.FireAt, prev)
		}
		if float64(r.FireAt.Sub(now)) < ceTickNs(s, k-1)-1 {
			t.Errorf("SetNextEvent(0, %v, %d ticks) fires at %v: earlier than %d ticks", now, k, r.FireAt, k-1)
		}
		prev = r.FireAt
	}
}

func ceCheckStates(t *testing.T, p sdk.ClockEventDevice) {
	s := p.Spec()
	now := ceNow
	ceArm(t, p, 0, now)
	if r := p.SetNextEvent(0, now, s.MinDeltaTicks*4); r.ETIME {
		t.Fatalf("SetNextEvent = -ETIME")
	}
	// Shutdown disarms: no interrupt afterwards.
	if cost, fire := p.SetState(0, now, sdk.StateShutdown, 0); cost < 0 || fire != ktime.Max {
		t.Errorf("SetState(shutdown) = (%d, %v), want cost >= 0 and no fire", cost, fire)
	}
	// Back to oneshot: nothing armed until a write.
	if cost, fire := p.SetState(0, now, sdk.StateOneshot, 0); cost < 0 || fire != ktime.Max {
		t.Errorf("SetState(oneshot) = (%d, %v), want cost >= 0 and no fire", cost, fire)
	}
	r := p.SetNextEvent(0, now, s.MinDeltaTicks*4)
	if r.ETIME {
		t.Fatalf("SetNextEvent after oneshot = -ETIME")
	}
	// ONESHOT_STOPPED stops the device or, for a driver without that
	// callback, leaves the pending event armed: never a new, earlier fire.
	cost, fire := p.SetState(0, now, sdk.StateOneshotStopped, 0)
	if cost < 0 || (fire != ktime.Max && fire != r.FireAt) {
		t.Errorf("SetState(oneshot_stopped) = (%d, %v), want cost >= 0 and no fire or the armed one %v", cost, fire, r.FireAt)
	}
	// Ack of a oneshot interrupt schedules nothing further.
	p.SetState(0, now, sdk.StateOneshot, 0)
	r = p.SetNextEvent(0, now, s.MinDeltaTicks*4)
	if ackCost, next := p.Ack(0, r.FireAt); ackCost < 0 || next != ktime.Max {
		t.Errorf("Ack(oneshot) = (%d, %v), want cost >= 0 and no further fire", ackCost, next)
	}
}

func ceCheckPeriodic(t *testing.T, p sdk.ClockEventDevice) {
	s := p.Spec()
	if s.Features&sdk.FeatPeriodic == 0 {
		// clockevents never asks a device without CLOCK_EVT_FEAT_PERIODIC
		// for periodic mode, so the contract has nothing to check here.
		t.Logf("%s has no periodic mode", s.Name)
		return
	}
	period := ktime.TickNsec(ceSetup("").HZ)
	now := ceNow
	p.SetState(0, now, sdk.StateShutdown, 0)
	cost, first := p.SetState(0, now, sdk.StatePeriodic, period)
	if cost < 0 || first <= now || first.Sub(now) > period+period/50+int64(ktime.Millisecond) {
		t.Fatalf("SetState(periodic, %d) = (%d, %v), want the first tick about one period after %v", period, cost, first, now)
	}
	at := first
	for i := range 5 {
		ackCost, next := p.Ack(0, at)
		gap := next.Sub(at)
		if ackCost < 0 || gap < period-period/50 || gap > period+period/50 {
			t.Errorf("tick %d: Ack(%v) = (%d, %v), want the next tick one period (%d ns, +-2%%) later", i, at, ackCost, next, period)
		}
		at = next
	}
	if _, fire := p.SetState(0, at, sdk.StateShutdown, 0); fire != ktime.Max {
		t.Errorf("SetState(shutdown) after periodic fires at %v, want never", fire)
	}
}

// ceScript drives p through a fixed sequence and records every answer.
func ceScript(p sdk.ClockEventDevice) []any {
	s := p.Spec()
	var out []any
	now := ceNow
	for _, ch := range ceChannels(s) {
		c1, f1 := p.SetState(ch, now, sdk.StateShutdown, 0)
		c2, f2 := p.SetState(ch, now, sdk.StateOneshot, 0)
		out = append(out, c1, f1, c2, f2)
		for _, k := range ceTickSteps(s) {
			now = now.Add(977)
			r := p.SetNextEvent(ch, now, k)
			out = append(out, r)
			if !r.ETIME && r.FireAt != ktime.Max {
				c, n := p.Ack(ch, r.FireAt)
				out = append(out, c, n)
				now = r.FireAt.Add(c)
			}
		}
	}
	return append(out, p.Counters())
}

// ceCheckModel: a device that declares a sdk.DeadlineModel answers a script
// of writes (small, large and overflowing tick counts, at times with every
// counter phase), acks and oneshot state changes exactly as the model
// (model.Deadline) computes, on every channel.
func ceCheckModel(t *testing.T, p sdk.ClockEventDevice) {
	dd, ok := p.(sdk.DeadlineDevice)
	if !ok {
		return
	}
	dm, ok := dd.DeadlineModel()
	if !ok {
		return
	}
	m, ok := model.NewDeadline(dm)
	if !ok {
		t.Fatalf("DeadlineModel() = %+v: malformed (zero rate or scale, negative cost or latency, a spread that cannot be drawn from)", dm)
	}
	s := p.Spec()
	ticks := append(ceTickSteps(s), 0, 1, math.MaxUint64/2, math.MaxUint64)
	now := ktime.Time(1000)
	for _, ch := range ceChannels(s) {
		for i, k := range ticks {
			now += ktime.Time(997 + 13*i)
			if got, want := p.SetNextEvent(ch, now, k), m.SetNextEvent(now, k); got != want {
				t.Errorf("SetNextEvent(%d, %v, %d) = %+v, the declared model gives %+v", ch, now, k, got, want)
			}
			now += 31
			if c, f := p.Ack(ch, now); true {
				if wc, wf := m.Ack(); c != wc || f != wf {
					t.Errorf("Ack(%d, %v) = %d, %v; the declared model gives %d, %v", ch, now, c, f, wc, wf)
				}
			}
		}
		for _, st := range []sdk.DeviceState{sdk.StateOneshot, sdk.StateOneshotStopped, sdk.StateOneshot, sdk.StateShutdown, sdk.StateOneshot} {
			now += 101
			c, f := p.SetState(ch, now, st, 0)
			if wc, wf, ok := m.SetState(st); ok && (c != wc || f != wf) {
				t.Errorf("SetState(%d, %v, %v) = %d, %v; the declared model gives %d, %v", ch, now, st, c, f, wc, wf)
			}
		}
	}
}
