package contract

import (
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Bounds of the contract that do not depend on the machine.
const (
	// MaxCost bounds one operation's cost, in ns: 10 s, the kernel's
	// watchdog_thresh (kernel/watchdog.c), past which the hard-lockup
	// detector reports a CPU stuck with interrupts off.
	MaxCost int64 = 10_000_000_000
	// MaxFreqHz bounds a device's frequency: 1 THz, far above any clockevent
	// device (TSC-deadline counts at a few GHz).
	MaxFreqHz = 1e12
	// MaxComparators bounds a global device's channels (HPET: up to 32
	// comparators per block, 8 blocks).
	MaxComparators = 256
	// MaxList bounds the device writes or expiries one answer lists.
	MaxList = 1 << 16
	// MaxCountersPerCPU bounds the counters a plugin reports: this many per
	// CPU, plus as many machine-wide.
	MaxCountersPerCPU = 64
	// MaxNameLen bounds a counter or attribute name, in bytes.
	MaxNameLen = 64
	// MaxDiagnostics bounds the diagnostics one Configure returns.
	MaxDiagnostics = 64
	// MaxTextLen bounds a diagnostic's summary or detail, in bytes.
	MaxTextLen = 1024
	// MaxCounter bounds a counter's value: 2^53, exact as a float64 (the
	// reports average and sum them as floats) and more events than a run
	// simulates. A wheel reporting MaxUint64 iterations was summed to
	// "catch-up iterations -466".
	MaxCounter = 1 << 53
)

// Limits are the bounds that depend on the run.
type Limits struct {
	// CPUs is the machine's CPU count.
	CPUs int
}

func (l Limits) maxChannels() int { return max(l.CPUs, MaxComparators) }

func (l Limits) maxCounters() int { return MaxCountersPerCPU * (max(l.CPUs, 0) + 1) }

// Wrap returns p, the plugin of kind called name, behind the checker of its
// kind; p itself if it is not of that kind (the loader refuses those).
func Wrap(kind sdk.Kind, name string, p sdk.Plugin, l Limits) sdk.Plugin {
	c := checker{kind: kind, name: name, limits: l}
	switch kind {
	case sdk.KindTimerBase:
		if tb, ok := p.(sdk.TimerBase); ok {
			ip, _ := tb.(sdk.InPlaceNextTimer)
			md, _ := tb.(sdk.NextTimerModeler)
			return &timerBase{plugin: plugin{checker: c, p: p}, tb: tb, inPlace: ip, models: ntModels{md: md}}
		}
	case sdk.KindHRTimer:
		if hb, ok := p.(sdk.HRTimerBase); ok {
			md, _ := hb.(sdk.HRTimerModeler)
			h := &hrTimerBase{plugin: plugin{checker: c, p: p}, hb: hb, models: hrModels{md: md, cpus: l.CPUs}}
			if st, ok := hb.(sdk.NextEventStarter); ok {
				return hrTimerBaseStarter{hrTimerBase: h, st: st}
			}
			return h
		}
	case sdk.KindClockEvent:
		if d, ok := p.(sdk.ClockEventDevice); ok {
			return &clockEvent{plugin: plugin{checker: c, p: p}, d: d}
		}
	case sdk.KindGovernor:
		if g, ok := p.(sdk.Governor); ok {
			return &governor{plugin: plugin{checker: c, p: p}, g: g}
		}
	}
	if w := wrapPolicy(kind, c, p); w != nil {
		return w
	}
	return p
}

// Unwrap returns the plugin behind a checker (and its meter, Count), or p.
func Unwrap(p sdk.Plugin) sdk.Plugin {
	for {
		u, ok := p.(interface{ unwrap() sdk.Plugin })
		if !ok {
			return p
		}
		p = u.unwrap()
	}
}

// checker names the plugin in violations.
type checker struct {
	kind   sdk.Kind
	name   string
	limits Limits
}

// violation panics with the ContractError of call. Kept out of line so that
// the checks on the hot path stay a few compares.
//
//go:noinline
func (c *checker) violation(call, format string, args ...any) {
	panic(&sdk.ContractError{Kind: c.kind, Name: c.name, Call: call, Problem: fmt.Sprintf(format, args...)})
}

// cost checks one cost.
func (c *checker) cost(call string, cost int64) {
	if uint64(cost) > uint64(MaxCost) { // a negative cost too
		c.badCost(call, cost)
	}
}

//go:noinline
func (c *checker) badCost(call string, cost int64) {
	c.violation(call, "cost %d ns is outside [0, %d] ns", cost, MaxCost)
}

// list checks the length of a list the host will walk.
func (c *checker) list(call, what string, n int) {
	if n > MaxList {
		c.violation(call, "%d %s, more than %d", n, what, MaxList)
	}
}

// ids is a bitmap of the timer ids the host gave a plugin. Ids are allocated
// densely from 1, so it stays as small as the run's timer count.
type ids []uint64

func (s *ids) add(id sdk.TimerID) {
	w := int(id >> 6)
	if w >= len(*s) {
		*s = append(*s, make([]uint64, w+1-len(*s))...)
	}
	(*s)[w] |= 1 << (id & 63)
}

func (s ids) has(id sdk.TimerID) bool {
	w := uint64(id >> 6)
	return w < uint64(len(s)) && s[w]&(1<<(id&63)) != 0
}

// plugin checks the calls every kind shares.
type plugin struct {
	checker
	p sdk.Plugin
}

func (p *plugin) unwrap() sdk.Plugin { return p.p }

// Info implements sdk.Plugin.
func (p *plugin) Info() sdk.Info { return p.p.Info() }

// Schema implements sdk.Plugin.
func (p *plugin) Schema() sdk.Schema { return p.p.Schema() }

// Configure implements sdk.Plugin: diagnostics are printable and bounded.
func (p *plugin) Configure(s sdk.Setup, cfg sdk.Config) sdk.Diagnostics {
	d := p.p.Configure(s, cfg)
	if len(d) > MaxDiagnostics {
		p.violation("Configure", "%d diagnostics, more than %d", len(d), MaxDiagnostics)
	}
	for _, x := range d {
		if x.Severity != sdk.SeverityError && x.Severity != sdk.SeverityWarning {
			p.violation("Configure", "diagnostic severity %d is neither error (1) nor warning (2)", x.Severity)
		}
		p.text("Configure", "diagnostic attribute", x.Attribute, MaxNameLen, false)
		p.text("Configure", "diagnostic summary", x.Summary, MaxTextLen, false)
		p.text("Configure", "diagnostic detail", x.Detail, MaxTextLen, true)
	}
	return d
}

// Counters implements sdk.Plugin: names printable and short, CPUs on the
// machine, a bounded number.
func (p *plugin) Counters() []sdk.Counter {
	cs := p.p.Counters()
	if n := p.limits.maxCounters(); len(cs) > n {
		p.violation("Counters", "%d counters, more than %d (%d per CPU and machine-wide)", len(cs), n, MaxCountersPerCPU)
	}
	for _, c := range cs {
		if c.Name == "" {
			p.violation("Counters", "a counter has no name")
		}
		p.text("Counters", "counter name", c.Name, MaxNameLen, false)
		if c.CPU < -1 || c.CPU >= p.limits.CPUs {
			p.violation("Counters", "counter %q is for CPU %d, not -1 (machine-wide) or a CPU of 0..%d", c.Name, c.CPU, p.limits.CPUs-1)
		}
		if c.Value < 0 || c.Value > MaxCounter {
			p.violation("Counters", "counter %q = %d is outside [0, %d]", c.Name, c.Value, int64(MaxCounter))
		}
	}
	return cs
}

// text checks that s is at most max bytes of valid, printable UTF-8 (with
// newlines and tabs if multiline).
func (p *plugin) text(call, what, s string, max int, multiline bool) {
	if len(s) > max {
		p.violation(call, "%s of %d bytes, more than %d: %.40q...", what, len(s), max, s)
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b < 0x7f {
			i++
			continue
		}
		if multiline && (b == '\n' || b == '\t') {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			p.violation(call, "%s %q holds a control or invalid character", what, s)
		}
		i += n
	}
}

// timerBase checks a sdk.TimerBase.
type timerBase struct {
	plugin
	tb      sdk.TimerBase
	inPlace sdk.InPlaceNextTimer // tb's, if it has it
	known   ids
	// While the plugin promises sdk.RepeatFreeNextTimer (repeatFree), the
	// host skips most repeats and asks one now and then to check the
	// promise (framework/kernel: CPU.wheelNextEvent): last[cpu] is the
	// CPU's previous NextTimerInterrupt, valid while its gen is opGen+1,
	// and opGen counts the calls that end a repeat (ModTimer, DelTimer,
	// RunTimers, ExpireRemote). A repeat must answer it, at cost 0.
	repeatFree bool
	opGen      uint64
	// models checks the plugin's declared sdk.NextTimerModel (models.go).
	models ntModels
	last   []lastNext
}

// lastNext is a CPU's previous NextTimerInterrupt: its jiffies and answer.
type lastNext struct {
	gen     uint64
	jiffies uint64
	r       sdk.NextTimerResult
}

// ModTimer implements sdk.TimerBase.
func (c *timerBase) ModTimer(cpu int, jiffies uint64, t sdk.WheelTimer) (r sdk.WheelOpResult) {
	c.known.add(t.ID)
	c.opGen++
	r = c.tb.ModTimer(cpu, jiffies, t)
	c.wheelOp("ModTimer", &r)
	return r
}

// DelTimer implements sdk.TimerBase.
func (c *timerBase) DelTimer(cpu int, jiffies uint64, id sdk.TimerID) (r sdk.WheelOpResult) {
	c.opGen++
	r = c.tb.DelTimer(cpu, jiffies, id)
	c.wheelOp("DelTimer", &r)
	return r
}

func (c *timerBase) wheelOp(call string, r *sdk.WheelOpResult) {
	c.cost(call, r.Cost)
	c.state(call, &r.State)
}

func (c *timerBase) state(call string, s *sdk.WheelState) {
	if s.Pending < 0 {
		c.violation(call, "%d timers pending", s.Pending)
	}
}

// RunTimers implements sdk.TimerBase: every expired timer is one the host
// queued, and its callback starts within the softirq.
func (c *timerBase) RunTimers(cpu int, jiffies uint64) (r sdk.RunTimersResult) {
	c.opGen++
	r = c.tb.RunTimers(cpu, jiffies)
	c.cost("RunTimers", r.Cost)
	c.state("RunTimers", &r.State)
	c.expired("RunTimers", "the softirq's", &r)
	return r
}

// expired checks a wheel run's expired timers (RunTimers, ExpireRemote):
// each is one the host queued, and its callback starts within the run.
func (c *timerBase) expired(call, run string, r *sdk.RunTimersResult) {
	c.list(call, "expired timers", len(r.Expired))
	for i := range r.Expired {
		e := &r.Expired[i]
		if !c.known.has(e.ID) {
			c.violation(call, "expired timer id %d, which the host never queued", e.ID)
		}
		if e.Offset < 0 || e.Offset > r.Cost {
			c.violation(call, "timer %d's callback starts at offset %d ns, outside %s [0, %d] ns", e.ID, e.Offset, run, r.Cost)
		}
	}
}

// NextTimerInterrupt implements sdk.TimerBase.
func (c *timerBase) NextTimerInterrupt(cpu int, jiffies uint64) (r sdk.NextTimerResult) {
	c.NextTimerInterruptInto(cpu, jiffies, &r)
	return r
}

// NextTimerInterruptInto implements sdk.InPlaceNextTimer with
// NextTimerInterrupt's checks, through the plugin's own in-place call when it
// has one.
func (c *timerBase) NextTimerInterruptInto(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	if c.models.md != nil && c.models.sample.due() {
		c.modelledNextTimer(cpu, jiffies, r)
	} else if c.inPlace != nil {
		c.inPlace.NextTimerInterruptInto(cpu, jiffies, r)
	} else {
		*r = c.tb.NextTimerInterrupt(cpu, jiffies)
	}
	c.cost("NextTimerInterrupt", r.Cost)
	c.state("NextTimerInterrupt", &r.State)
	if c.repeatFree {
		c.repeat(cpu, jiffies, r)
	}
}

// NextTimerRepeatFree implements sdk.RepeatFreeNextTimer: the plugin's own
// promise (false without one). A repeat the host skips answers what the
// checked call before it answered; the repeats it still asks are checked
// against that answer (repeat).
func (c *timerBase) NextTimerRepeatFree() bool {
	rf, ok := c.tb.(sdk.RepeatFreeNextTimer)
	c.repeatFree = ok && rf.NextTimerRepeatFree()
	return c.repeatFree
}

// repeat checks sdk.RepeatFreeNextTimer's promise on r, cpu's answer at
// jiffies: if it repeats cpu's previous call (the same jiffies, no wheel
// call since), it answers that call's Next and State at cost 0. A plugin
// that breaks the promise would have the host reuse answers it would not
// give.
func (c *timerBase) repeat(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	if cpu < 0 {
		return
	}
	if cpu >= len(c.last) {
		c.last = append(c.last, make([]lastNext, cpu+1-len(c.last))...)
	}
	l := &c.last[cpu]
	if l.gen == c.opGen+1 && l.jiffies == jiffies && (r.Cost != 0 || r.Next != l.r.Next || r.State != l.r.State) {
		c.violation("NextTimerInterrupt", "the plugin promises sdk.RepeatFreeNextTimer, but cpu %d asked again at jiffies %d with no wheel call since answered next %d at cost %d ns (state %+v), not its previous answer, next %d at cost 0 (state %+v)",
			cpu, jiffies, r.Next, r.Cost, r.State, l.r.Next, l.r.State)
	}
	l.gen, l.jiffies, l.r = c.opGen+1, jiffies, *r
}

// ExpireRemote implements sdk.RemoteTimerBase with RunTimers' checks; the
// host calls it only when the plugin's state says Split.
func (c *timerBase) ExpireRemote(cpu int, jiffies uint64) (r sdk.RunTimersResult) {
	rb, ok := c.tb.(sdk.RemoteTimerBase)
	if !ok {
		c.violation("ExpireRemote", "the plugin reports split bases (WheelState.Split) but does not implement sdk.RemoteTimerBase")
		return sdk.RunTimersResult{}
	}
	c.opGen++
	r = rb.ExpireRemote(cpu, jiffies)
	c.cost("ExpireRemote", r.Cost)
	c.state("ExpireRemote", &r.State)
	c.expired("ExpireRemote", "the run's", &r)
	return r
}

// hrTimerBase checks a sdk.HRTimerBase.
type hrTimerBase struct {
	plugin
	hb    sdk.HRTimerBase
	known ids
	// models checks the plugin's declared sdk.HRTimerModel (models.go).
	models hrModels
}

// Start implements sdk.HRTimerBase.
func (c *hrTimerBase) Start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) (r sdk.HROpResult) {
	if c.models.md != nil && c.models.sample.due() {
		r = c.modelledStart(cpu, now, t, expires, slack)
	} else {
		r = c.hb.Start(cpu, now, t, expires, slack)
	}
	c.checkStart(t.ID, r.Cost, len(r.Program), r.Ret)
	return r
}

// checkStart checks Start's answer for timer id: its cost, device writes
// and return value. It records id as known first: only an id the host
// started may come back expired.
func (c *hrTimerBase) checkStart(id sdk.TimerID, cost int64, writes int, ret int) {
	if uint64(cost) > uint64(MaxCost) || writes > MaxList || ret != 0 && ret != 1 {
		c.badStart(id, cost, writes, ret)
		return
	}
	c.known.add(id) // last: nothing is live across its rare growth
}

// badStart is checkStart's checks in full, for an answer that fails one.
//
//go:noinline
func (c *hrTimerBase) badStart(id sdk.TimerID, cost int64, writes int, ret int) {
	c.known.add(id)
	c.cost("Start", cost)
	c.list("Start", "device writes", writes)
	if ret != 0 && ret != 1 {
		c.violation("Start", "returned %d, want 0 (was not queued) or 1 (was queued)", ret)
	}
}

// checkInterrupt checks the fields of Interrupt's answer for an interrupt
// entered at now (see pass). It tests the answer as check does, in line,
// and leaves it to check to name the violation it finds.
func (c *hrTimerBase) checkInterrupt(now, end ktime.Time, expired []sdk.HRExpiry, writes, retries int, hangDelay int64) {
	// (Each call to check returns at once: nothing is live across it to
	// be spilled on the way in.)
	if end < now || int64(end-now) > MaxCost || len(expired) > MaxList || writes > MaxList ||
		retries < 0 || uint64(hangDelay) > uint64(MaxCost) {
		c.check("Interrupt", now, end, expired, writes, retries, hangDelay)
		return
	}
	for i := range expired {
		if e := &expired[i]; !c.known.has(e.ID) || e.Now < now || e.Now > end {
			c.check("Interrupt", now, end, expired, writes, retries, hangDelay)
			return
		}
	}
}

// Cancel implements sdk.HRTimerBase.
func (c *hrTimerBase) Cancel(cpu int, now ktime.Time, id sdk.TimerID) (r sdk.HROpResult) {
	r = c.hb.Cancel(cpu, now, id)
	c.checkCancel(r.Cost, len(r.Program), r.Ret)
	return r
}

// checkCancel checks Cancel's answer: its cost, device writes and return
// value.
func (c *hrTimerBase) checkCancel(cost int64, writes int, ret int) {
	c.cost("Cancel", cost)
	c.list("Cancel", "device writes", writes)
	if ret < -1 || ret > 1 {
		c.violation("Cancel", "returned %d, want -1, 0 or 1 (hrtimer_try_to_cancel)", ret)
	}
}

// ClockWasSet implements sdk.HRTimerBase: the answer is one of the three
// masks, with no device write (the retrigger makes those).
func (c *hrTimerBase) ClockWasSet(cpu int, now ktime.Time, off sdk.ClockOffsets) (r sdk.HROpResult) {
	r = c.hb.ClockWasSet(cpu, now, off)
	c.op("ClockWasSet", &r)
	if r.Ret < 0 || r.Ret > sdk.ClockWasSetEachCPU || len(r.Program) > 0 {
		c.violation("ClockWasSet", "returned %d with %d device writes, want 0, %d or %d and none",
			r.Ret, len(r.Program), sdk.ClockWasSetIPI, sdk.ClockWasSetEachCPU)
	}
	return r
}

// RetriggerNextEvent implements sdk.HRTimerBase.
func (c *hrTimerBase) RetriggerNextEvent(cpu int, now ktime.Time) (r sdk.HROpResult) {
	r = c.hb.RetriggerNextEvent(cpu, now)
	c.op("RetriggerNextEvent", &r)
	return r
}

func (c *hrTimerBase) op(call string, r *sdk.HROpResult) {
	c.cost(call, r.Cost)
	c.list(call, "device writes", len(r.Program))
}

// Interrupt implements sdk.HRTimerBase.
func (c *hrTimerBase) Interrupt(cpu int, now ktime.Time) (r sdk.InterruptResult) {
	if c.models.md != nil && c.models.sample.due() {
		r = c.modelledInterrupt(cpu, now)
	} else {
		r = c.hb.Interrupt(cpu, now)
	}
	c.checkInterrupt(now, r.End, r.Expired, len(r.Program), r.Retries, r.HangDelay)
	c.models.expired(&r)
	return r
}

// InterruptETIME implements sdk.HRTimerBase.
func (c *hrTimerBase) InterruptETIME(cpu int, now ktime.Time) (r sdk.InterruptResult) {
	r = c.hb.InterruptETIME(cpu, now)
	c.pass("InterruptETIME", now, &r)
	return r
}

// RunSoftirq implements sdk.HRTimerBase.
func (c *hrTimerBase) RunSoftirq(cpu int, now ktime.Time) (r sdk.InterruptResult) {
	r = c.hb.RunSoftirq(cpu, now)
	c.pass("RunSoftirq", now, &r)
	return r
}

// RunQueues implements sdk.HRTimerBase.
func (c *hrTimerBase) RunQueues(cpu int, now ktime.Time) (r sdk.InterruptResult) {
	r = c.hb.RunQueues(cpu, now)
	c.pass("RunQueues", now, &r)
	return r
}

// pass checks an interrupt or softirq pass entered at now: it ends within
// MaxCost, each callback starts between entry and end, each timer is known.
func (c *hrTimerBase) pass(call string, now ktime.Time, r *sdk.InterruptResult) {
	c.check(call, now, r.End, r.Expired, len(r.Program), r.Retries, r.HangDelay)
	c.models.expired(r)
}

// check is pass on the answer's fields.
func (c *hrTimerBase) check(call string, now, end ktime.Time, expired []sdk.HRExpiry, writes, retries int, hangDelay int64) {
	if end < now || int64(end-now) > MaxCost {
		c.violation(call, "handler entered at %d ends at %d, outside [now, now+%d ns]", now, end, MaxCost)
	}
	c.list(call, "expired timers", len(expired))
	c.list(call, "device writes", writes)
	if retries < 0 || hangDelay < 0 || hangDelay > MaxCost {
		c.violation(call, "retries %d, hang delay %d ns: want >= 0, the delay at most %d ns", retries, hangDelay, MaxCost)
	}
	for i := range expired {
		e := &expired[i]
		if !c.known.has(e.ID) {
			c.violation(call, "expired timer id %d, which the host never started", e.ID)
		}
		if e.Now < now || e.Now > end {
			c.violation(call, "timer %d's callback starts at %d, outside the handler's [%d, %d]", e.ID, e.Now, now, end)
		}
	}
}

// NextEvent implements sdk.HRTimerBase. Any time is valid: the earliest
// expiry may already be past (a timer due but not yet run).
func (c *hrTimerBase) NextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	if c.models.md != nil && c.models.sample.due() {
		return c.modelledNextEvent(cpu, now, exclude)
	}
	return c.hb.NextEvent(cpu, now, exclude)
}

// hrTimerBaseStarter is hrTimerBase for a plugin that implements
// sdk.NextEventStarter (the out-of-process client): the checker passes it on,
// so the host can ask another plugin while the answer is on its way. Like
// NextEvent, any answer is valid.
type hrTimerBaseStarter struct {
	*hrTimerBase
	st sdk.NextEventStarter
}

// StartNextEvent implements sdk.NextEventStarter.
func (c hrTimerBaseStarter) StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) (wait func() ktime.Time) {
	return c.st.StartNextEvent(cpu, now, exclude)
}

// clockEvent checks a sdk.ClockEventDevice.
type clockEvent struct {
	plugin
	d sdk.ClockEventDevice
}

// Spec implements sdk.ClockEventDevice.
func (c *clockEvent) Spec() sdk.DeviceSpec {
	s := c.d.Spec()
	c.text("Spec", "device name", s.Name, MaxNameLen, false)
	if math.IsNaN(s.FreqHz) || s.FreqHz <= 0 || s.FreqHz > MaxFreqHz {
		c.violation("Spec", "frequency %g Hz is not a finite number in (0, %g]", s.FreqHz, MaxFreqHz)
	}
	if s.MinDeltaTicks < 1 || s.MaxDeltaTicks < s.MinDeltaTicks {
		c.violation("Spec", "delta limits [%d, %d] ticks: want 1 <= min <= max", s.MinDeltaTicks, s.MaxDeltaTicks)
	}
	if n := c.limits.maxChannels(); s.Channels < 1 || s.Channels > n {
		c.violation("Spec", "%d channels, outside 1..%d (the machine's %d CPUs, or %d comparators)", s.Channels, n, c.limits.CPUs, MaxComparators)
	}
	if s.Mult != 0 && s.Shift > 32 {
		c.violation("Spec", "shift %d, more than 32", s.Shift)
	}
	return s
}

// SetNextEvent implements sdk.ClockEventDevice: the interrupt is raised
// after now. The core never programs less than min_delta_ns, which is at
// least 1 us (clockevent_delta2ns()), so an interrupt at now is a lie, and the
// host would take it, reprogram, and take it again at the same instant.
func (c *clockEvent) SetNextEvent(ch int, now ktime.Time, ticks uint64) (r sdk.ProgramResult) {
	r = c.d.SetNextEvent(ch, now, ticks)
	c.CheckSetNextEvent(ch, now, ticks, r)
	return r
}

// Unchecked, MaxCost, CheckSetNextEvent and CheckAck take SetNextEvent and
// Ack apart for the clockevents core's hot path (tick_program_event()'s
// write and the interrupt's EOI): the core calls Unchecked's SetNextEvent or
// Ack itself, tests the answer in line (a cost within [0, MaxCost], an
// interrupt after now unless -ETIME; the next one after now), and hands a
// failing answer to CheckSetNextEvent or CheckAck, the wrapper's own checks,
// which name the violation (they do not return for one).

// Unchecked returns the device behind the checker.
func (c *clockEvent) Unchecked() sdk.ClockEventDevice { return c.d }

// MaxCost is the bound of one call's cost the checks hold answers to.
func (c *clockEvent) MaxCost() int64 { return MaxCost }

// CheckSetNextEvent is SetNextEvent's checks of r, the answer to
// SetNextEvent(ch, now, ticks).
func (c *clockEvent) CheckSetNextEvent(ch int, now ktime.Time, ticks uint64, r sdk.ProgramResult) {
	c.cost("SetNextEvent", r.Cost)
	if !r.ETIME && r.FireAt <= now {
		c.violation("SetNextEvent", "interrupt at %d, not after now %d (%d ticks)", r.FireAt, now, ticks)
	}
}

// CheckAck is Ack's checks of its answer (cost, next) at now.
func (c *clockEvent) CheckAck(now ktime.Time, cost int64, next ktime.Time) {
	c.cost("Ack", cost)
	if next <= now {
		c.violation("Ack", "next interrupt at %d, not after now %d", next, now)
	}
}

// SetState implements sdk.ClockEventDevice.
func (c *clockEvent) SetState(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
	cost, first := c.d.SetState(ch, now, st, period)
	c.cost("SetState", cost)
	if first < now {
		c.violation("SetState", "first interrupt at %d, before now %d", first, now)
	}
	return cost, first
}

// Ack implements sdk.ClockEventDevice: a periodic device's next interrupt is
// after this one; at or before now the host would take it again at the same
// instant, forever.
func (c *clockEvent) Ack(ch int, now ktime.Time) (int64, ktime.Time) {
	cost, next := c.d.Ack(ch, now)
	c.CheckAck(now, cost, next)
	return cost, next
}

// governor checks a sdk.Governor: every choice names one of the states the
// host enabled on that CPU, at a bounded cost.
type governor struct {
	plugin
	g      sdk.Governor
	states []int // by CPU, the number of states given to Enable
}

// Enable implements sdk.Governor.
func (c *governor) Enable(cpu int, states []sdk.CPUIdleState) {
	if cpu >= 0 && cpu < c.limits.CPUs {
		if c.states == nil {
			c.states = make([]int, c.limits.CPUs)
		}
		c.states[cpu] = len(states)
	}
	c.g.Enable(cpu, states)
}

// Select implements sdk.Governor. The test of the answer is in line
// (selectOK); badSelect names the violation.
func (c *governor) Select(r sdk.IdleSelect) sdk.IdleChoice {
	a := c.g.Select(r)
	if !c.selectOK(r.CPU, a) {
		c.badSelect(r.CPU, a)
	}
	return a
}

// selectOK reports whether a choice for cpu passes the checks: its cost,
// and a state the host enabled on cpu.
func (c *governor) selectOK(cpu int, a sdk.IdleChoice) bool {
	return uint(cpu) < uint(len(c.states)) && uint(a.State) < uint(c.states[cpu]) && uint64(a.Cost) <= uint64(MaxCost)
}

// badSelect is Select's checks in full, for a choice that fails one.
//
//go:noinline
func (c *governor) badSelect(cpu int, a sdk.IdleChoice) {
	c.cost("Select", a.Cost)
	n := 0
	if cpu >= 0 && cpu < len(c.states) {
		n = c.states[cpu]
	}
	if a.State < 0 || a.State >= n {
		c.violation("Select", "state %d on cpu %d, which has states 0..%d", a.State, cpu, n-1)
	}
}

// Reflect implements sdk.Governor. It has no answer to check.
func (c *governor) Reflect(r sdk.IdleReflect) { c.g.Reflect(r) }
