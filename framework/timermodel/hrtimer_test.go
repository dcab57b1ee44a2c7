package timermodel_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/timermodel"
	"github.com/tickemu/tickemu/plugins/hrtimer"
)

// newHRTimer returns the builtin hrtimer plugin configured with over.
func newHRTimer(t *testing.T, cpus int, highRes bool, over map[string]string) *hrtimer.Plugin {
	t.Helper()
	p := hrtimer.New().(*hrtimer.Plugin)
	c := sdk.Config{}
	for _, a := range p.Schema().Attributes {
		c[a.Name] = a.Default
	}
	for k, v := range over {
		c[k] = v
	}
	if d := p.Configure(sdk.Setup{CPUs: cpus, HZ: 1000, HighRes: highRes, Seed: 1}, c); d.HasErrors() {
		t.Fatal(d)
	}
	return p
}

// TestHRTimerModelMatchesPlugin drives the builtin hrtimer plugin with random
// starts, cancels, next-event queries and the interrupts its device writes
// ask for, and checks every answer the declared model covers against the
// plugin's, and the model after each modelled start against the plugin's new
// declaration. It also checks that the model covers most starts, so the test
// cannot pass by declaring nothing.
func TestHRTimerModelMatchesPlugin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		highRes bool
		over    map[string]string
		covered bool // the model must cover most calls
	}{
		{"mainline", true, nil, true},
		{"stale-softirq", true, map[string]string{"softirq_next": "stale"}, true},
		{"double-restart", true, map[string]string{"restart": "double"}, false},
		{"lowres", false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				modelled := runHRModelCheck(t, seed, tc.highRes, tc.over)
				if tc.covered && modelled < 100 {
					t.Fatalf("seed %d: only %d calls modelled", seed, modelled)
				}
				if !tc.covered && modelled != 0 {
					t.Fatalf("seed %d: %d calls modelled by a plugin that must not declare a model", seed, modelled)
				}
			}
		})
	}
}

func runHRModelCheck(t *testing.T, seed uint64, highRes bool, over map[string]string) (modelled int) {
	const cpus, ids = 3, 10
	p := newHRTimer(t, cpus, highRes, over)
	rng := rand.New(rand.NewPCG(seed, 7))
	dev := make([]ktime.Time, cpus)
	for i := range dev {
		dev[i] = ktime.Max
	}
	queuedOn := map[sdk.TimerID]int{}
	var busyUntil ktime.Time
	now := ktime.Time(1000)
	for step := 0; step < 2000; step++ {
		now += ktime.Time(rng.Int64N(int64(200 * ktime.Microsecond)))
		cpu := rng.IntN(cpus)
		if highRes && dev[cpu] <= now {
			r := p.Interrupt(cpu, now)
			busyUntil = max(busyUntil, r.End)
			for _, e := range r.Expired {
				if !e.Restarted {
					delete(queuedOn, e.ID)
				}
			}
			if len(r.Program) > 0 {
				dev[cpu] = r.Program[len(r.Program)-1]
			} else {
				dev[cpu] = ktime.Max
			}
			if r.RaiseSoftirq {
				s := p.RunSoftirq(cpu, r.End)
				busyUntil = max(busyUntil, s.End)
				for _, e := range s.Expired {
					if !e.Restarted {
						delete(queuedOn, e.ID)
					}
				}
				if len(s.Program) > 0 {
					dev[cpu] = s.Program[len(s.Program)-1]
				}
			}
			continue
		}
		id := sdk.TimerID(1 + rng.IntN(ids))
		m := p.HRTimerModel(cpu)
		switch rng.IntN(4) {
		case 0:
			ex := sdk.TimerID(0)
			if rng.IntN(2) == 0 {
				ex = id
			}
			got := p.NextEvent(cpu, now, ex)
			if want, ok := timermodel.HRNextEvent(&m, ex); ok {
				modelled++
				if got != want {
					t.Fatalf("seed %d step %d: NextEvent(%d, exclude %d) = %d, model %d (%+v)", seed, step, cpu, ex, got, want, m)
				}
			}
		case 1:
			r := p.Cancel(cpu, now, id)
			if r.Ret == 1 || r.Ret == 0 {
				delete(queuedOn, id)
			}
			if len(r.Program) > 0 {
				dev[cpu] = r.Program[len(r.Program)-1]
			}
		default:
			ht := sdk.HRTimer{ID: id, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeAbs, CallbackCost: rng.Int64N(3000)}
			if rng.IntN(4) == 0 {
				ht.Period = 100000 + rng.Int64N(400000)
			}
			exp := now + ktime.Time(rng.Int64N(int64(2*ktime.Millisecond)))
			switch rng.IntN(20) {
			case 0:
				ht.Mode = sdk.HRModeRel
				exp = ktime.Time(rng.Int64N(int64(ktime.Millisecond)))
			case 1:
				exp = ktime.Time(rng.Int64N(int64(now)))
			case 2:
				ht.Mode |= sdk.HRModeSoft
			}
			if rng.IntN(2) == 0 {
				// On a coarse grid: equal expiries, and restarts to the
				// programmed time.
				exp = exp / ktime.Time(50*ktime.Microsecond) * ktime.Time(50*ktime.Microsecond)
			}
			slack := int64(0)
			if rng.IntN(3) == 0 {
				slack = rng.Int64N(50000)
			}
			other, queued := queuedOn[id]
			cover := now >= busyUntil && !(queued && other != cpu)
			before := m
			before.Queue = slices.Clone(m.Queue)
			want, ok := sdk.HROpResult{}, false
			if cover {
				want, ok = timermodel.HRStart(&m, now, ht, exp, slack)
			}
			got := p.Start(cpu, now, ht, exp, slack)
			got.Program = slices.Clone(got.Program)
			queuedOn[id] = cpu
			if now < busyUntil {
				delete(queuedOn, id) // may have stayed where its callback runs
				queuedOn[id] = -1
			}
			if len(got.Program) > 0 {
				dev[cpu] = got.Program[len(got.Program)-1]
			}
			if !ok {
				continue
			}
			modelled++
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d step %d: Start(%d, %d, %+v, %d, %d) = %+v, model %+v (model before %+v)", seed, step, cpu, now, ht, exp, slack, got, want, before)
			}
			if after := p.HRTimerModel(cpu); after.Valid && fmt.Sprint(after) != fmt.Sprint(m) {
				t.Fatalf("seed %d step %d: after Start(%d, %+v, %d) the plugin declares %+v, the model computed %+v (before %+v)", seed, step, cpu, ht, exp, after, m, before)
			}
		}
	}
	return modelled
}
