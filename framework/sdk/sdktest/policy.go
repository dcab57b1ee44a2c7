package sdktest

import (
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// polCPUs is the machine size of the policy suites.
const polCPUs = 4

// maxHangDelay is the contract's bound on a hang delay: 10 s, the kernel's
// hard-lockup threshold (watchdog_thresh), as for every cost.
const maxHangDelay = 10 * ktime.Second

// RunHangPolicy runs the conformance suite for a sdk.HangPolicy. newPlugin
// returns a fresh, unconfigured plugin each time; the suite configures it
// with its schema's defaults for a 4-CPU HZ=1000 machine.
//
// It checks: Info and the schema are well formed; every delay of a seeded
// script of hangs (interrupts that spent 1 us to 1 s, max_hang_time up to
// u32's 4.29 s) is in [0, 10 s]; Counters are well formed; two fresh
// instances answer the same script identically.
func RunHangPolicy(t *testing.T, newPlugin func(t *testing.T) sdk.HangPolicy) {
	t.Helper()
	polRun(t, sdk.KindHangPolicy, func(t *testing.T) sdk.Plugin { return newPlugin(t) },
		func(t *testing.T, p sdk.Plugin, n int) any {
			h := p.(sdk.HangPolicy)
			rng := simrand.New(1, "sdktest/hang")
			var out []sdk.HangDecision
			var maxHang int64
			for i := range n {
				spent := int64(1000 + rng.Int63n(int64(ktime.Second)))
				maxHang = max(maxHang, int64(uint32(spent)))
				now := ktime.Time(int64(i+1)*int64(ktime.Second) + spent)
				r := sdk.HangRequest{CPU: intn(rng, polCPUs), Now: now, Entry: now - ktime.Time(spent),
					NrHangs: int64(i + 1), MaxHangTime: maxHang}
				d := h.Hang(r)
				if d.Delay < 0 || d.Delay > maxHangDelay {
					t.Errorf("Hang(%+v) = delay %d ns, want 0 <= delay <= %d", r, d.Delay, maxHangDelay)
				}
				out = append(out, d)
			}
			return out
		})
}

// RunCatchupPolicy runs the conformance suite for a sdk.CatchupPolicy: as
// RunHangPolicy, with a seeded script of __run_timers() calls on every base
// (gaps of 0 to 10^6 jiffies, empty and busy bases), every answer one of
// the three sdk.CatchupMode values.
func RunCatchupPolicy(t *testing.T, newPlugin func(t *testing.T) sdk.CatchupPolicy) {
	t.Helper()
	polRun(t, sdk.KindCatchupPolicy, func(t *testing.T) sdk.Plugin { return newPlugin(t) },
		func(t *testing.T, p sdk.Plugin, n int) any {
			c := p.(sdk.CatchupPolicy)
			rng := simrand.New(1, "sdktest/catchup")
			var out []sdk.CatchupDecision
			j := uint64(4294937296) // INITIAL_JIFFIES on 64-bit: -300 s at HZ=1000
			for range n {
				gap := uint64(rng.Int63n(3))
				if rng.Int63n(4) == 0 {
					gap = uint64(rng.Int63n(1000000))
				}
				j += gap + 1
				r := sdk.CatchupRequest{CPU: intn(rng, polCPUs), Base: intn(rng, 3), Jiffies: j, Clk: j - gap,
					Pending: intn(rng, 3) * intn(rng, 50)}
				d := c.Catchup(r)
				if d.Mode < sdk.CatchupWalk || d.Mode > sdk.CatchupNextExpiry {
					t.Errorf("Catchup(%+v) = mode %d, not an sdk.CatchupMode", r, d.Mode)
				}
				out = append(out, d)
			}
			return out
		})
}

// RunRestartPolicy runs the conformance suite for a sdk.RestartPolicy: as
// RunHangPolicy, with a seeded script of restarts of a CPU's first timer.
func RunRestartPolicy(t *testing.T, newPlugin func(t *testing.T) sdk.RestartPolicy) {
	t.Helper()
	polRun(t, sdk.KindRestartPolicy, func(t *testing.T) sdk.Plugin { return newPlugin(t) },
		func(t *testing.T, p sdk.Plugin, n int) any {
			rp := p.(sdk.RestartPolicy)
			rng := simrand.New(1, "sdktest/restart")
			var out []sdk.RestartDecision
			now := ktime.Time(1000)
			for range n {
				now += ktime.Time(1 + rng.Int63n(100000))
				old := now + ktime.Time(rng.Int63n(int64(ktime.Millisecond)))
				out = append(out, rp.Restart(sdk.RestartRequest{CPU: intn(rng, polCPUs), Now: now,
					Old: old, New: old + ktime.Time(rng.Int63n(200000)-100000)}))
			}
			return out
		})
}

// polRun is what the policy suites share: script asks n decisions of a
// configured policy, checks each and returns them.
func polRun(t *testing.T, kind sdk.Kind, newPlugin func(*testing.T) sdk.Plugin,
	script func(t *testing.T, p sdk.Plugin, n int) any) {
	t.Helper()
	fresh := func(t *testing.T) sdk.Plugin {
		t.Helper()
		p := newPlugin(t)
		cfg := mustDefaults(t, p.Schema())
		if d := p.Configure(sdk.Setup{CPUs: polCPUs, HZ: 1000, HighRes: true, Seed: 1}, cfg); d.HasErrors() {
			t.Fatalf("Configure(defaults) = %v", d)
		}
		return p
	}
	t.Run("Info", func(t *testing.T) {
		i := newPlugin(t).Info()
		if i.Kind != kind || i.Name == "" || i.Version == "" || i.Description == "" {
			t.Errorf("Info() = %+v, want kind %q, a name, version and description", i, kind)
		}
	})
	t.Run("Schema", func(t *testing.T) { checkSchema(t, newPlugin(t).Schema()) })
	t.Run("Decisions", func(t *testing.T) { script(t, fresh(t), 2000) })
	t.Run("Deterministic", func(t *testing.T) {
		a, b := script(t, fresh(t), 300), script(t, fresh(t), 300)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("two fresh instances answered the same decisions differently:\n%v\n%v", a, b)
		}
	})
	t.Run("Counters", func(t *testing.T) {
		p := fresh(t)
		script(t, p, 100)
		a, b := p.Counters(), p.Counters()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Counters() changed between two calls: %v, then %v", a, b)
		}
		for _, c := range a {
			if c.Name == "" || c.CPU < -1 || c.CPU >= polCPUs {
				t.Errorf("counter %+v: want a name and CPU -1 or a CPU of the machine", c)
			}
		}
	})
}
