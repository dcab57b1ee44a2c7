package sdktest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/model"
)

// hrCheckModel drives a plugin that declares sdk.HRTimerModel with random
// starts (hard and soft, absolute and relative, with slack, restarts of
// queued timers, equal expiries), cancels, next-event queries and the
// interrupts and softirqs its device writes ask for, and checks every Start
// and NextEvent answer the declared model covers against the plugin's, and
// the model after each modelled Start against the plugin's new declaration.
// It returns how many calls the model covered (0 for a plugin without one).
func hrCheckModel(t *testing.T, p sdk.HRTimerBase, highRes bool, seed uint64) (modelled int) {
	t.Helper()
	md, ok := p.(sdk.HRTimerModeler)
	if !ok {
		return 0
	}
	cfg := mustDefaults(t, p.Schema())
	s := hrSetup(highRes)
	if d := p.Configure(s, cfg); d.HasErrors() {
		t.Fatalf("Configure(%+v, %v) = %v", s, cfg, d)
	}
	const ids = 10
	cpus := s.CPUs
	rng := rand.New(rand.NewPCG(seed, 7))
	dev := make([]ktime.Time, cpus)
	for i := range dev {
		dev[i] = ktime.Max
	}
	// The host's precondition (framework/sdk/shim): a Start is modelled
	// unless the timer is queued on another CPU, its CPU may still be in a
	// handler (busyUntil) or the timer's callback may still run (running).
	queuedOn := map[sdk.TimerID]int{}
	busyUntil := make([]ktime.Time, cpus)
	running := map[sdk.TimerID]ktime.Time{}
	now := ktime.Time(1000)
	for step := 0; step < 2000; step++ {
		now += ktime.Time(rng.Int64N(int64(200 * ktime.Microsecond)))
		cpu := rng.IntN(cpus)
		early := false
		if m := md.HRTimerModel(cpu); highRes && dev[cpu] != ktime.Max && rng.IntN(4) == 0 {
			// An interrupt whose pass samples exactly the programmed time.
			if at := dev[cpu] - ktime.Time(m.EntryCost); at >= now {
				now, early = at, true
			}
		}
		if highRes && (dev[cpu] <= now || early) {
			m := md.HRTimerModel(cpu)
			before := m
			before.Queue = slices.Clone(m.Queue)
			want, modelledIRQ := model.HRInterrupt(&m, now)
			r := p.Interrupt(cpu, now)
			if modelledIRQ {
				modelled++
				got := r
				got.Expired, got.Program = slices.Clone(r.Expired), slices.Clone(r.Program)
				if len(got.Expired) == 0 {
					got.Expired = nil
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d step %d: Interrupt(%d, %d) = %+v, model %+v (model before %+v)", seed, step, cpu, now, got, want, before)
				}
				if after := md.HRTimerModel(cpu); after.Valid && fmt.Sprint(after) != fmt.Sprint(m) {
					t.Fatalf("seed %d step %d: after Interrupt(%d, %d) the plugin declares %+v, the model computed %+v (before %+v)", seed, step, cpu, now, after, m, before)
				}
			}
			busyUntil[cpu] = max(busyUntil[cpu], r.End)
			for _, e := range r.Expired {
				running[e.ID] = max(running[e.ID], r.End)
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
				busyUntil[cpu] = max(busyUntil[cpu], s.End)
				for _, e := range s.Expired {
					running[e.ID] = max(running[e.ID], s.End)
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
		m := md.HRTimerModel(cpu)
		switch rng.IntN(4) {
		case 0:
			ex := sdk.TimerID(0)
			if rng.IntN(2) == 0 {
				ex = id
			}
			got := p.NextEvent(cpu, now, ex)
			if want, ok := model.HRNextEvent(&m, ex); ok {
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
			cover := now >= busyUntil[cpu] && now >= running[id] && !(queued && other != cpu)
			before := m
			before.Queue = slices.Clone(m.Queue)
			want, ok := sdk.HROpResult{}, false
			if cover {
				want, ok = model.HRStart(&m, now, ht, exp, slack)
			}
			got := p.Start(cpu, now, ht, exp, slack)
			got.Program = slices.Clone(got.Program)
			queuedOn[id] = cpu
			if now < running[id] {
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
			if after := md.HRTimerModel(cpu); after.Valid && fmt.Sprint(after) != fmt.Sprint(m) {
				t.Fatalf("seed %d step %d: after Start(%d, %+v, %d) the plugin declares %+v, the model computed %+v (before %+v)", seed, step, cpu, ht, exp, after, m, before)
			}
		}
	}
	return modelled
}
