package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

const (
	us = ktime.Microsecond
	ms = ktime.Millisecond
)

// at returns the time d ns after boot.
func at(d int64) ktime.Time { return ktime.Time(d) }

// configure returns a configured plugin: schema defaults, then over.
func configure(t testing.TB, s sdk.Setup, over map[string]string) *Plugin {
	t.Helper()
	c := sdk.Config{}
	for _, a := range schema().Attributes {
		c[a.Name] = a.Default
	}
	for k, v := range over {
		c[k] = v
	}
	p := New().(*Plugin)
	if d := p.Configure(s, c); d.HasErrors() {
		t.Fatalf("Configure(%+v, %v) = %v, want no errors", s, c, d)
	}
	return p
}

// zeroCosts is an override map that sets every plugin cost to 0.
func zeroCosts() map[string]string {
	m := map[string]string{}
	for _, a := range costAttrs {
		m[a.name] = "0"
	}
	return m
}

// merge returns a new map with the entries of all maps, later ones winning.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func highRes(cpus int) sdk.Setup { return sdk.Setup{CPUs: cpus, HZ: 1000, HighRes: true, Seed: 1} }
func lowRes(cpus, hz int) sdk.Setup {
	return sdk.Setup{CPUs: cpus, HZ: hz, HighRes: false, Seed: 1}
}

// expiry is one callback reported to the rig.
type expiry struct {
	cpu int
	sdk.HRExpiry
	softirq bool // reported by RunSoftirq
}

// rig drives a Plugin as a minimal host would: each CPU's clockevent fires at
// the last Program target (or when the CPU stops being busy), the interrupt
// runs, and HRTIMER_SOFTIRQ runs at its end when raised. In low-res mode the
// tick calls RunQueues every TICK_NSEC instead. Device writes cost nothing.
type rig struct {
	t    testing.TB
	p    *Plugin
	dev  []ktime.Time // programmed target per CPU, ktime.Max = stopped
	busy []ktime.Time // the CPU is in an interrupt or softirq until then
	last []ktime.Time // time of the CPU's last operation: a past target fires then
	tick []ktime.Time // low-res: next tick per CPU

	writes, irqs, softirqs []int
	expired                []expiry
	results                []sdk.InterruptResult // every Interrupt/RunQueues result, in order
	maxIRQs                int                   // safety net against storms that do not advance time
}

func newRig(t testing.TB, p *Plugin) *rig {
	n := len(p.cpus)
	r := &rig{t: t, p: p, dev: make([]ktime.Time, n), busy: make([]ktime.Time, n), last: make([]ktime.Time, n), tick: make([]ktime.Time, n),
		writes: make([]int, n), irqs: make([]int, n), softirqs: make([]int, n), maxIRQs: 5_000_000}
	for i := range r.dev {
		r.dev[i] = ktime.Max
		r.tick[i] = ktime.Time(ktime.TickNsec(p.setup.HZ))
	}
	return r
}

func (r *rig) program(cpu int, prog []ktime.Time) {
	for _, e := range prog {
		r.dev[cpu] = e
		r.writes[cpu]++
	}
}

// fireTime is when cpu's next interrupt (or tick) happens.
func (r *rig) fireTime(cpu int) ktime.Time {
	f := r.dev[cpu]
	if !r.p.highRes {
		f = r.tick[cpu]
	}
	if f == ktime.Max {
		return f
	}
	return max(f, r.busy[cpu], r.last[cpu])
}

// advance runs every interrupt due at or before to, in time order (lower CPU
// first on ties).
func (r *rig) advance(to ktime.Time) {
	for {
		cpu, when := -1, ktime.Max
		for c := range r.dev {
			if f := r.fireTime(c); f < when {
				cpu, when = c, f
			}
		}
		if cpu < 0 || when > to {
			return
		}
		r.fire(cpu, when)
	}
}

// fire runs cpu's interrupt (or tick) at when, then the softirq if raised.
func (r *rig) fire(cpu int, when ktime.Time) {
	r.irqs[cpu]++
	if r.irqs[cpu] > r.maxIRQs {
		r.t.Fatalf("cpu %d: more than %d interrupts by %v: storm that does not advance time", cpu, r.maxIRQs, when)
	}
	var res sdk.InterruptResult
	if r.p.highRes {
		r.dev[cpu] = ktime.Max // dev->next_event = KTIME_MAX at entry
		res = interrupt(r.p, cpu, when)
	} else {
		r.tick[cpu] = r.tick[cpu].Add(ktime.TickNsec(r.p.setup.HZ))
		res = r.p.RunQueues(cpu, when)
	}
	r.results = append(r.results, res)
	r.program(cpu, res.Program)
	for _, e := range res.Expired {
		r.expired = append(r.expired, expiry{cpu: cpu, HRExpiry: e})
	}
	end := res.End
	if res.RaiseSoftirq {
		r.softirqs[cpu]++
		s := r.p.RunSoftirq(cpu, end)
		r.program(cpu, s.Program)
		for _, e := range s.Expired {
			r.expired = append(r.expired, expiry{cpu: cpu, HRExpiry: e, softirq: true})
		}
		end = s.End
	}
	r.busy[cpu] = end
}

// opTime advances to when and returns the time cpu can act (after its busy
// period).
func (r *rig) opTime(cpu int, when ktime.Time) ktime.Time {
	r.advance(when)
	r.last[cpu] = max(when, r.busy[cpu])
	return r.last[cpu]
}

func (r *rig) start(cpu int, when ktime.Time, ht sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	res := r.p.Start(cpu, r.opTime(cpu, when), ht, expires, slack)
	r.program(cpu, res.Program)
	return res
}

func (r *rig) cancel(cpu int, when ktime.Time, id sdk.TimerID) sdk.HROpResult {
	res := r.p.Cancel(cpu, r.opTime(cpu, when), id)
	r.program(cpu, res.Program)
	return res
}

func (r *rig) clockWasSet(when ktime.Time, off sdk.ClockOffsets) {
	var retrigger []int
	for cpu := range r.dev {
		if res := r.p.ClockWasSet(cpu, r.opTime(cpu, when), off); res.Ret != 0 {
			retrigger = append(retrigger, cpu)
		}
	}
	for _, cpu := range retrigger {
		res := r.p.RetriggerNextEvent(cpu, r.opTime(cpu, when))
		r.program(cpu, res.Program)
	}
}

// expiriesOf returns the expiries of timer id, in order.
func (r *rig) expiriesOf(id sdk.TimerID) []expiry {
	var out []expiry
	for _, e := range r.expired {
		if e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

func hard(id sdk.TimerID) sdk.HRTimer {
	return sdk.HRTimer{ID: id, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeAbs}
}

// interrupt runs hrtimer_interrupt() on cpu at now to its end, as the host
// does: a tick_program_event(expires_next, 0) the plugin leaves to the device
// (TryProgram) fails when the event is not after the write's time (the
// clockevents "delta <= 0" rule, the only -ETIME of these tests), and the
// plugin's InterruptETIME makes the next pass. The merged result lists every
// pass's expiries, the last pass's writes and the passes' retries.
func interrupt(p *Plugin, cpu int, now ktime.Time) sdk.InterruptResult {
	r := p.Interrupt(cpu, now)
	r.Expired = append([]sdk.HRExpiry(nil), r.Expired...)
	for r.TryProgram && len(r.Program) > 0 && r.Program[len(r.Program)-1] <= r.End {
		n := p.InterruptETIME(cpu, r.End)
		r.Expired = append(r.Expired, n.Expired...)
		r.Program = n.Program
		r.End, r.TryProgram, r.Hang, r.HangDelay = n.End, n.TryProgram, n.Hang, n.HangDelay
		r.Retries += n.Retries
		r.RaiseSoftirq = r.RaiseSoftirq || n.RaiseSoftirq
	}
	return r
}
