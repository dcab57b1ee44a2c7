package sdktest

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// hrSetup is the machine the hrtimer suite configures plugins for.
func hrSetup(highRes bool) sdk.Setup {
	return sdk.Setup{CPUs: 2, HZ: 250, HighRes: highRes, Seed: 1}
}

// RunHRTimerBase runs the conformance suite for a sdk.HRTimerBase. newPlugin
// returns a fresh, unconfigured plugin each time it is called; the suite
// configures it with the schema's defaults for a 2-CPU, HZ=250 machine, once in
// high-res and once in low-res mode. To check a non-default strategy, wrap the
// plugin with HRTimerWithConfig.
//
// The suite drives the plugin like a minimal host: each CPU's device fires at
// the last Program target (high-res) or the tick calls RunQueues every
// TICK_NSEC (low-res), HRTIMER_SOFTIRQ runs at the end of the interrupt that
// raised it, and device writes cost nothing. It checks, against its own model
// of which timers are pending:
//
//   - no timer ever runs before its soft expiry, nor after it was cancelled,
//     nor on a CPU it is not queued on; hard timers run from Interrupt or
//     RunQueues, soft ones from RunSoftirq; BaseNow = Now + the clock's offset;
//     a declared Period re-arms past the callback's start;
//   - Start resolves REL against the clock's now (a relative CLOCK_REALTIME
//     timer becomes CLOCK_MONOTONIC) and reports whether the timer was queued;
//   - Cancel returns 1 for a queued timer, 0 for an inactive one, -1 while the
//     callback runs (from HRExpiry.Now to Now + CallbackCost);
//   - NextEvent is the earliest queued expiry (in CLOCK_MONOTONIC), with and
//     without an excluded timer;
//   - in high-res mode, for hard timers and while no hang is in effect, a CPU's
//     device is never armed later than its NextEvent, and every operation that
//     writes it leaves it armed exactly for NextEvent; in low-res mode nothing
//     writes the device;
//   - an absolute CLOCK_REALTIME timer follows a clock jump, a relative one
//     does not;
//   - every one-shot timer eventually runs;
//   - two fresh instances given the same calls answer identically, and
//     Counters are stable;
//   - a plugin that declares sdk.HRTimerModel answers every Start and
//     NextEvent its model covers as the model says, and declares after such a
//     Start the state the model computed;
//   - with kernel.timer_migration on (a 3-CPU machine, one nohz_full CPU),
//     Start places timers as switch_hrtimer_base() may (hrCheckPlacement).
func RunHRTimerBase(t *testing.T, newPlugin func(t *testing.T) sdk.HRTimerBase) {
	t.Helper()
	t.Run("Info", func(t *testing.T) {
		info := newPlugin(t).Info()
		if info.Kind != sdk.KindHRTimer || info.Name == "" {
			t.Errorf("Info() = %+v, want kind %q and a name", info, sdk.KindHRTimer)
		}
	})
	t.Run("Schema", func(t *testing.T) { hrCheckSchema(t, newPlugin(t).Schema()) })
	t.Run("Placement", func(t *testing.T) { hrCheckPlacement(t, newPlugin) })
	for _, hres := range []bool{true, false} {
		name := "lowres"
		if hres {
			name = "highres"
		}
		t.Run(name, func(t *testing.T) {
			fresh := func(t *testing.T) *hrRig { return hrNewRig(t, newPlugin(t), hres) }
			t.Run("Cancel", func(t *testing.T) { hrCheckCancel(t, fresh(t)) })
			t.Run("Mixed", func(t *testing.T) {
				for seed := uint64(1); seed <= 4; seed++ {
					hrRunScript(t, fresh(t), seed, false)
				}
			})
			t.Run("HardDevice", func(t *testing.T) {
				for seed := uint64(11); seed <= 14; seed++ {
					hrRunScript(t, fresh(t), seed, true)
				}
			})
			t.Run("ClockWasSet", func(t *testing.T) { hrCheckClockWasSet(t, fresh(t)) })
			t.Run("Model", func(t *testing.T) {
				for seed := uint64(1); seed <= 3; seed++ {
					hrCheckModel(t, newPlugin(t), hres, seed)
				}
			})
			t.Run("Determinism", func(t *testing.T) {
				a, b := fresh(t), fresh(t)
				a.log, b.log = &strings.Builder{}, &strings.Builder{}
				hrRunScript(t, a, 99, false)
				hrRunScript(t, b, 99, false)
				if a.log.String() != b.log.String() {
					t.Errorf("two fresh instances answered the same calls differently:\n%s", hrFirstDiff(a.log.String(), b.log.String()))
				}
			})
			t.Run("Counters", func(t *testing.T) {
				r := fresh(t)
				hrRunScript(t, r, 5, false)
				c1, c2 := r.p.Counters(), r.p.Counters()
				if fmt.Sprint(c1) != fmt.Sprint(c2) {
					t.Errorf("Counters() not stable: %v then %v", c1, c2)
				}
				for _, c := range c1 {
					if c.Name == "" || c.CPU < -1 || c.CPU >= r.cpus {
						t.Errorf("counter %+v: want a name and CPU in [-1, %d)", c, r.cpus)
					}
				}
			})
		})
	}
}

// HRTimerWithConfig wraps p so that Configure applies over on top of the
// attributes it is given: RunHRTimerBase(t, func(t *testing.T) sdk.HRTimerBase {
// return sdktest.HRTimerWithConfig(myplugin.New(), sdk.Config{"x": "y"}) }).
func HRTimerWithConfig(p sdk.HRTimerBase, over sdk.Config) sdk.HRTimerBase {
	return hrOverride{HRTimerBase: p, over: over}
}

type hrOverride struct {
	sdk.HRTimerBase
	over sdk.Config
}

// HRTimerModel passes the wrapped plugin's declared model on (none when it
// declares none).
func (o hrOverride) HRTimerModel(cpu int) sdk.HRTimerModel {
	if m, ok := o.HRTimerBase.(sdk.HRTimerModeler); ok {
		return m.HRTimerModel(cpu)
	}
	return sdk.HRTimerModel{}
}

func (o hrOverride) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	m := sdk.Config{}
	for k, v := range c {
		m[k] = v
	}
	for k, v := range o.over {
		m[k] = v
	}
	return o.HRTimerBase.Configure(s, m)
}

func hrCheckSchema(t *testing.T, s sdk.Schema) {
	checkEras(t, s)
	seen := map[string]bool{}
	for _, a := range s.Attributes {
		if a.Name == "" || seen[a.Name] {
			t.Errorf("attribute name %q empty or repeated", a.Name)
		}
		seen[a.Name] = true
		if a.Name == "plugin" || a.Name == "isolation" {
			t.Errorf("schema declares the host's attribute %q", a.Name)
		}
		switch a.Type {
		case sdk.TypeString, sdk.TypeNumber, sdk.TypeBool, sdk.TypeDuration, sdk.TypeFrequency:
		default:
			t.Errorf("attribute %s has unknown type %q", a.Name, a.Type)
		}
		if len(a.OneOf) > 0 && a.Default != "" {
			ok := false
			for _, o := range a.OneOf {
				ok = ok || o == a.Default
			}
			if !ok {
				t.Errorf("attribute %s default %q not in %v", a.Name, a.Default, a.OneOf)
			}
		}
	}
	if _, err := Defaults(s, nil); err != nil {
		t.Error(err)
	}
}

// hrModelTimer is the suite's view of one timer.
type hrModelTimer struct {
	ht       sdk.HRTimer
	cpu      int
	pending  bool
	off      int64 // offset of the resolved clock
	slack    int64
	soft     bool
	softMono int64 // earliest allowed run, CLOCK_MONOTONIC
	hardMono int64 // queue/device expiry, CLOCK_MONOTONIC
	runEnd   ktime.Time
}

// hrRig drives a plugin and checks it against the model.
type hrRig struct {
	t       *testing.T
	p       sdk.HRTimerBase
	highRes bool
	cpus    int
	tickNs  int64
	now     ktime.Time
	lastOp  ktime.Time // time of the last Start, Cancel or ClockWasSet
	dev     []ktime.Time
	busy    []ktime.Time
	tick    []ktime.Time
	off     sdk.ClockOffsets
	timers  map[sdk.TimerID]*hrModelTimer

	checkDevice bool   // hard-only script: device vs NextEvent checks
	suspended   []bool // a hang is in effect on the CPU: device checks paused
	irqs        int
	log         *strings.Builder // transcript for the determinism check
}

func hrNewRig(t *testing.T, p sdk.HRTimerBase, highRes bool) *hrRig {
	t.Helper()
	cfg := mustDefaults(t, p.Schema())
	s := hrSetup(highRes)
	if d := p.Configure(s, cfg); d.HasErrors() {
		t.Fatalf("Configure(%+v, %v) = %v", s, cfg, d)
	}
	r := &hrRig{t: t, p: p, highRes: highRes, cpus: s.CPUs, tickNs: ktime.TickNsec(s.HZ),
		dev: make([]ktime.Time, s.CPUs), busy: make([]ktime.Time, s.CPUs), tick: make([]ktime.Time, s.CPUs),
		timers: map[sdk.TimerID]*hrModelTimer{}, suspended: make([]bool, s.CPUs)}
	for c := range r.dev {
		r.dev[c] = ktime.Max
		r.tick[c] = ktime.Time(r.tickNs)
	}
	return r
}

func (r *hrRig) logf(format string, args ...any) {
	if r.log != nil {
		fmt.Fprintf(r.log, format+"\n", args...)
	}
}

// clockOffset returns the offset of the clock a timer resolves to and that
// clock: a relative CLOCK_REALTIME timer becomes CLOCK_MONOTONIC.
func (r *hrRig) clockOffset(ht sdk.HRTimer) int64 {
	switch {
	case ht.Clock == sdk.ClockRealtime && ht.Mode&sdk.HRModeRel != 0:
		return 0
	case ht.Clock == sdk.ClockRealtime:
		return r.off.Real
	case ht.Clock == sdk.ClockBoottime:
		return r.off.Boot
	case ht.Clock == sdk.ClockTAI:
		return r.off.TAI
	}
	return 0
}

func (r *hrRig) fireTime(cpu int) ktime.Time {
	f := r.dev[cpu]
	if !r.highRes {
		f = r.tick[cpu]
	}
	if f == ktime.Max {
		return f
	}
	// A target already in the past when it was written fires at once.
	return max(f, r.busy[cpu], r.lastOp)
}

// advance runs every interrupt due at or before to, in time order.
func (r *hrRig) advance(to ktime.Time) {
	for {
		cpu, when := -1, ktime.Max
		for c := 0; c < r.cpus; c++ {
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

// settle makes every CPU idle at r.now (moving r.now past busy periods), so
// that operations never land inside an interrupt batch.
func (r *hrRig) settle() {
	for {
		r.advance(r.now)
		moved := false
		for c := 0; c < r.cpus; c++ {
			if r.busy[c] > r.now {
				r.now, moved = r.busy[c], true
			}
		}
		if !moved {
			return
		}
	}
}

func (r *hrRig) fire(cpu int, when ktime.Time) {
	r.t.Helper()
	if r.irqs++; r.irqs > 2_000_000 {
		r.t.Fatalf("more than 2e6 interrupts by %v: a storm that does not advance time", when)
	}
	var res sdk.InterruptResult
	if r.highRes {
		r.dev[cpu] = ktime.Max
		res = r.p.Interrupt(cpu, when)
	} else {
		r.tick[cpu] = r.tick[cpu].Add(r.tickNs)
		res = r.p.RunQueues(cpu, when)
	}
	r.logf("irq cpu%d %v -> %+v", cpu, when, res)
	if res.End < when {
		r.t.Errorf("cpu%d interrupt at %v ends at %v, before it started", cpu, when, res.End)
	}
	r.expire(cpu, when, res.Expired, false)
	// A write left to the device (tick_program_event(t, 0)) fails when t is
	// not after the write's time; the plugin then makes its next pass.
	for res.TryProgram && len(res.Program) > 0 && res.Program[len(res.Program)-1] <= res.End {
		entry := res.End
		raise := res.RaiseSoftirq
		res = r.p.InterruptETIME(cpu, entry)
		r.logf("irq -ETIME cpu%d %v -> %+v", cpu, entry, res)
		if res.End < entry {
			r.t.Errorf("cpu%d InterruptETIME at %v ends at %v, before it started", cpu, entry, res.End)
		}
		r.expire(cpu, entry, res.Expired, false)
		res.RaiseSoftirq = res.RaiseSoftirq || raise
	}
	r.program(cpu, "interrupt", res.Program, res.Hang)
	if r.highRes && r.checkDevice && !res.Hang {
		r.suspended[cpu] = false
		r.checkWrite(cpu, when, "interrupt", res.Program)
	}
	if res.Hang {
		r.suspended[cpu] = true
	}
	end := res.End
	if res.RaiseSoftirq {
		s := r.p.RunSoftirq(cpu, end)
		r.logf("softirq cpu%d %v -> %+v", cpu, end, s)
		r.expire(cpu, end, s.Expired, true)
		r.program(cpu, "softirq", s.Program, false)
		end = max(end, s.End)
	}
	r.busy[cpu] = end
	r.checkNextEvents()
}

// expire checks and applies the callbacks of one call entered at entry.
func (r *hrRig) expire(cpu int, entry ktime.Time, exps []sdk.HRExpiry, softirq bool) {
	r.t.Helper()
	for _, e := range exps {
		m := r.timers[e.ID]
		switch {
		case m == nil || !m.pending:
			r.t.Errorf("cpu%d: timer %d ran at %v but is not queued (cancelled, expired or never started)", cpu, e.ID, e.Now)
			continue
		case m.cpu != cpu:
			r.t.Errorf("timer %d ran on cpu%d, queued on cpu%d", e.ID, cpu, m.cpu)
		case int64(e.Now) < m.softMono:
			r.t.Errorf("timer %d ran at %v, before its soft expiry %v (early)", e.ID, e.Now, ktime.Time(m.softMono))
		case e.Now < entry:
			r.t.Errorf("timer %d ran at %v, before the call was entered at %v", e.ID, e.Now, entry)
		case e.Soft != m.soft || softirq != m.soft:
			r.t.Errorf("timer %d (soft %v) reported Soft=%v by softirq=%v", e.ID, m.soft, e.Soft, softirq)
		case int64(e.BaseNow) != int64(e.Now)+m.off:
			r.t.Errorf("timer %d: BaseNow %v, want Now %v + offset %d", e.ID, e.BaseNow, e.Now, m.off)
		}
		m.runEnd = e.Now.Add(m.ht.CallbackCost)
		if !e.Restarted {
			if m.ht.Period > 0 {
				r.t.Errorf("timer %d declares Period %d but was not restarted", e.ID, m.ht.Period)
			}
			m.pending = false
			continue
		}
		if m.ht.Period == 0 || e.Overruns < 1 || e.NewExpires <= e.BaseNow {
			r.t.Errorf("timer %d restarted with %+v (Period %d): want Period > 0, Overruns >= 1, NewExpires > BaseNow", e.ID, e, m.ht.Period)
		}
		m.hardMono = int64(e.NewExpires) - m.off
		m.softMono = m.hardMono - m.slack
	}
}

// program records device writes; in low-res mode there must be none.
func (r *hrRig) program(cpu int, op string, prog []ktime.Time, hang bool) {
	r.t.Helper()
	if !r.highRes && len(prog) > 0 {
		r.t.Errorf("low-res %s on cpu%d wrote the device %v; hrtimer code never programs in low-res mode", op, cpu, prog)
	}
	if len(prog) > 0 {
		r.dev[cpu] = prog[len(prog)-1]
	}
}

// modelNext is the earliest queued expiry of cpu, skipping exclude.
func (r *hrRig) modelNext(cpu int, exclude sdk.TimerID) ktime.Time {
	next := int64(math.MaxInt64)
	for id, m := range r.timers {
		if m.pending && m.cpu == cpu && id != exclude && m.hardMono < next {
			next = m.hardMono
		}
	}
	if next < 0 {
		next = 0
	}
	return ktime.Time(next)
}

// checkWrite checks that a write by cpu's own operation targets NextEvent.
func (r *hrRig) checkWrite(cpu int, when ktime.Time, op string, prog []ktime.Time) {
	r.t.Helper()
	if len(prog) == 0 || r.suspended[cpu] {
		return
	}
	if last, want := prog[len(prog)-1], r.modelNext(cpu, 0); last != want {
		r.t.Errorf("%s on cpu%d at %v left the device armed for %v, want the next event %v (writes %v)", op, cpu, when, last, want, prog)
	}
}

// checkNextEvents compares NextEvent with the model on every CPU, and the
// device with NextEvent in the hard-only script.
func (r *hrRig) checkNextEvents() {
	r.t.Helper()
	for c := 0; c < r.cpus; c++ {
		want := r.modelNext(c, 0)
		if got := r.p.NextEvent(c, r.now, 0); got != want {
			r.t.Errorf("NextEvent(cpu%d) = %v, want %v", c, got, want)
		}
		if r.highRes && r.checkDevice && !r.suspended[c] && r.dev[c] > want {
			r.t.Errorf("cpu%d device armed for %v, later than its next event %v", c, r.dev[c], want)
		}
	}
	// One exclusion per call, chosen deterministically.
	var ids []sdk.TimerID
	for id, m := range r.timers {
		if m.pending {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	m := r.timers[ids[len(ids)/2]]
	if got, want := r.p.NextEvent(m.cpu, r.now, ids[len(ids)/2]), r.modelNext(m.cpu, ids[len(ids)/2]); got != want {
		r.t.Errorf("NextEvent(cpu%d, exclude %d) = %v, want %v", m.cpu, ids[len(ids)/2], got, want)
	}
}

func (r *hrRig) start(cpu int, ht sdk.HRTimer, expires ktime.Time, slack int64) {
	r.t.Helper()
	m := r.timers[ht.ID]
	if m == nil {
		m = &hrModelTimer{}
		r.timers[ht.ID] = m
	}
	r.lastOp = r.now
	res := r.p.Start(cpu, r.now, ht, expires, slack)
	r.logf("start cpu%d %v %+v %v %d -> %+v", cpu, r.now, ht, expires, slack, res)
	if want := map[bool]int{true: 1, false: 0}[m.pending]; res.Ret != want {
		r.t.Errorf("Start(cpu%d, timer %d) Ret = %d, want %d (queued before: %v)", cpu, ht.ID, res.Ret, want, m.pending)
	}
	off := r.clockOffset(ht)
	soft := int64(expires)
	if ht.Mode&sdk.HRModeRel != 0 {
		soft += int64(r.now) + off
	}
	if int64(res.SoftExpires) != soft || int64(res.Expires) != soft+slack {
		r.t.Errorf("Start(timer %d, %v %v, expires %v, slack %d) at %v = Expires %v SoftExpires %v, want %v and %v",
			ht.ID, ht.Clock, ht.Mode, expires, slack, r.now, res.Expires, res.SoftExpires, ktime.Time(soft+slack), ktime.Time(soft))
	}
	*m = hrModelTimer{ht: ht, cpu: cpu, pending: true, off: off, slack: slack, soft: ht.Mode&sdk.HRModeSoft != 0,
		softMono: int64(res.SoftExpires) - off, hardMono: int64(res.Expires) - off, runEnd: m.runEnd}
	r.program(cpu, "start", res.Program, false)
	if r.highRes && r.checkDevice {
		r.checkWrite(cpu, r.now, "start", res.Program)
	}
	r.checkNextEvents()
}

func (r *hrRig) cancel(cpu int, id sdk.TimerID) {
	r.t.Helper()
	r.lastOp = r.now
	res := r.p.Cancel(cpu, r.now, id)
	r.logf("cancel cpu%d %v %d -> %+v", cpu, r.now, id, res)
	m := r.timers[id]
	want := 0
	switch {
	case m != nil && r.now < m.runEnd:
		want = -1
	case m != nil && m.pending:
		want = 1
		m.pending = false
	}
	if res.Ret != want {
		r.t.Errorf("Cancel(cpu%d, timer %d) at %v = %d, want %d", cpu, id, r.now, res.Ret, want)
	}
	r.program(cpu, "cancel", res.Program, false)
	if r.highRes && r.checkDevice {
		r.checkWrite(cpu, r.now, "cancel", res.Program)
	}
	r.checkNextEvents()
}

func (r *hrRig) clockWasSet(off sdk.ClockOffsets) {
	r.t.Helper()
	r.off = off
	r.lastOp = r.now
	// clock_was_set() from outside the machine's CPUs: every CPU the plugin
	// names (in the IPI mask, or all of them) runs retrigger_next_event().
	var retrigger []int
	for c := 0; c < r.cpus; c++ {
		res := r.p.ClockWasSet(c, r.now, off)
		r.logf("clock_was_set cpu%d %v %+v -> %+v", c, r.now, off, res)
		if res.Ret < 0 || res.Ret > sdk.ClockWasSetEachCPU || len(res.Program) > 0 {
			r.t.Errorf("ClockWasSet(cpu%d) = %+v, want Ret 0, %d or %d and no device write", c, res, sdk.ClockWasSetIPI, sdk.ClockWasSetEachCPU)
		}
		if res.Ret != 0 {
			retrigger = append(retrigger, c)
		}
	}
	for _, c := range retrigger {
		res := r.p.RetriggerNextEvent(c, r.now)
		r.logf("retrigger_next_event cpu%d %v -> %+v", c, r.now, res)
		r.program(c, "clock_was_set", res.Program, false)
	}
	for _, m := range r.timers {
		if m.pending {
			// Only absolute REALTIME/TAI/BOOTTIME timers move.
			noff := r.clockOffset(m.ht)
			d := noff - m.off
			m.off = noff
			m.softMono -= d
			m.hardMono -= d
		}
	}
	r.checkNextEvents()
}

// hrRand is a tiny deterministic generator (SplitMix64) for the scripts.
type hrRand struct{ s uint64 }

func (g *hrRand) next() uint64 {
	g.s += 0x9E3779B97F4A7C15
	z := g.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (g *hrRand) intn(n int64) int64 { return int64(g.next() % uint64(n)) }

// hrRunScript runs a seeded sequence of starts, cancels and waits, then
// cancels the periodic timers and checks that every other timer runs. With
// hardOnly every timer is a hard CLOCK_MONOTONIC one and the device checks are
// on.
func hrRunScript(t *testing.T, r *hrRig, seed uint64, hardOnly bool) {
	t.Helper()
	g := &hrRand{s: seed}
	r.checkDevice = hardOnly
	r.now = ktime.Time(ktime.Microsecond)
	r.clockWasSet(sdk.ClockOffsets{Real: 1_000_000 * ktime.Second, Boot: 3 * ktime.Second, TAI: 1_000_037 * ktime.Second})
	clocks := []sdk.ClockID{sdk.ClockMonotonic, sdk.ClockRealtime, sdk.ClockBoottime, sdk.ClockTAI}
	const ids = 16
	for range 400 {
		switch op := g.intn(10); {
		case op < 5:
			ht := sdk.HRTimer{ID: sdk.TimerID(1 + g.intn(ids)), Clock: sdk.ClockMonotonic}
			if m := r.timers[ht.ID]; m != nil && r.now < m.runEnd {
				continue // restarting from inside the callback is not scripted
			}
			if !hardOnly {
				ht.Clock = clocks[g.intn(4)]
				if g.intn(3) == 0 {
					ht.Mode |= sdk.HRModeSoft
				}
			}
			if g.intn(2) == 0 {
				ht.Mode |= sdk.HRModeRel
			}
			if g.intn(4) == 0 {
				ht.Period = 50*ktime.Microsecond + g.intn(2*ktime.Millisecond)
			}
			ht.CallbackCost = g.intn(5 * ktime.Microsecond)
			rel := g.intn(3 * ktime.Millisecond)
			expires := ktime.Time(rel)
			if ht.Mode&sdk.HRModeRel == 0 {
				expires = ktime.Time(int64(r.now) + rel + r.clockOffset(ht))
			}
			var slack int64
			if !hardOnly && g.intn(2) == 0 {
				slack = g.intn(100 * ktime.Microsecond)
			}
			r.start(int(g.intn(int64(r.cpus))), ht, expires, slack)
		case op < 7:
			r.cancel(int(g.intn(int64(r.cpus))), sdk.TimerID(1+g.intn(ids)))
		default:
			r.now = r.now.Add(g.intn(500 * ktime.Microsecond))
		}
		r.settle()
	}
	// Liveness: stop the periodic timers, then every queued timer must run.
	ids2 := make([]sdk.TimerID, 0, len(r.timers))
	for id := range r.timers {
		ids2 = append(ids2, id)
	}
	sort.Slice(ids2, func(i, j int) bool { return ids2[i] < ids2[j] })
	for _, id := range ids2 {
		if m := r.timers[id]; m.pending && m.ht.Period > 0 {
			r.cancel(m.cpu, id)
			r.settle()
		}
	}
	r.now = r.now.Add(ktime.Second)
	r.settle()
	for _, id := range ids2 {
		if m := r.timers[id]; m.pending {
			t.Errorf("seed %d: timer %d (hard expiry %v) still queued at %v", seed, id, ktime.Time(m.hardMono), r.now)
		}
	}
}

// hrCheckCancel checks hrtimer_try_to_cancel()'s three answers.
func hrCheckCancel(t *testing.T, r *hrRig) {
	r.now = ktime.Time(ktime.Microsecond)
	r.cancel(0, 1000) // never started: 0
	ht := sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, CallbackCost: 20 * ktime.Microsecond}
	r.start(0, ht, ktime.Time(ktime.Millisecond), 0)
	r.cancel(1, 1) // queued: 1
	r.cancel(1, 1) // inactive: 0

	per := sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, CallbackCost: 20 * ktime.Microsecond, Period: ktime.Millisecond}
	r.start(0, ht, ktime.Time(ktime.Millisecond), 0)
	r.start(0, per, ktime.Time(2*ktime.Millisecond), 0)
	for _, id := range []sdk.TimerID{1, 2} {
		for r.timers[id].runEnd == 0 {
			next := r.fireTime(0)
			if next == ktime.Max || next > ktime.Time(10*ktime.Millisecond) {
				t.Fatalf("timer %d did not run by %v", id, next)
			}
			r.advance(next)
		}
		m := r.timers[id]
		start := m.runEnd.Add(-m.ht.CallbackCost)
		r.now = start.Add(10 * ktime.Microsecond)
		r.cancel(1, id) // callback running: -1
		r.now = m.runEnd
		r.cancel(1, id) // returned: 0 for the one-shot, 1 for the re-armed periodic timer
	}
	r.now = r.now.Add(10 * ktime.Millisecond)
	r.settle()
}

// hrCheckClockWasSet checks that an absolute CLOCK_REALTIME timer follows a
// forward jump of the clock (it runs earlier in CLOCK_MONOTONIC, never before
// its expiry in CLOCK_REALTIME) and a relative one does not.
func hrCheckClockWasSet(t *testing.T, r *hrRig) {
	const real0 = 1_700_000_000 * ktime.Second
	r.now = ktime.Time(ktime.Microsecond)
	r.clockWasSet(sdk.ClockOffsets{Real: real0, TAI: real0 + 37*ktime.Second})
	abs := sdk.HRTimer{ID: 1, Clock: sdk.ClockRealtime, Mode: sdk.HRModeAbs}
	rel := sdk.HRTimer{ID: 2, Clock: sdk.ClockRealtime, Mode: sdk.HRModeRel}
	r.start(0, abs, ktime.Time(real0+int64(r.now)+20*ktime.Millisecond), 0)
	r.start(0, rel, ktime.Time(20*ktime.Millisecond), 0)
	r.now = r.now.Add(ktime.Millisecond)
	r.settle()
	r.clockWasSet(sdk.ClockOffsets{Real: real0 + 10*ktime.Millisecond, TAI: real0 + 37*ktime.Second + 10*ktime.Millisecond})
	if got, want := r.p.NextEvent(0, r.now, 2), ktime.Time(ktime.Microsecond+10*ktime.Millisecond); got != want {
		t.Errorf("NextEvent(exclude the relative timer) after a 10 ms jump = %v, want %v", got, want)
	}
	r.now = r.now.Add(50 * ktime.Millisecond)
	r.settle()
	for _, id := range []sdk.TimerID{1, 2} {
		if r.timers[id].pending {
			t.Errorf("timer %d still queued at %v", id, r.now)
		}
	}
}

// hrFirstDiff returns the first differing line of two transcripts.
func hrFirstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}
