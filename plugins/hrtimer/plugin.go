package hrtimer

import (
	"fmt"
	"math"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/policy"
)

// Version is the plugin's own semantic version.
const Version = "1.0.0"

// Plugin models every CPU's struct hrtimer_cpu_base. It implements
// sdk.HRTimerBase. The zero value is not usable; call New, then Configure.
type Plugin struct {
	cfg   Config
	setup sdk.Setup
	// hang and restart are the policies asked at those decisions: the
	// builtins the hang_delay and restart attributes name, or the ones the
	// host handed over (UsePolicy). restartFixed is set when restart is a
	// builtin, whose constant answer restartDeferred then is (no call on
	// the hot path); custom is set once a restart policy came from the
	// host (Start's answers then follow code the model does not know).
	hang            sdk.HangPolicy
	restart         sdk.RestartPolicy
	restartFixed    bool
	restartDeferred bool
	custom          bool
	highRes         bool
	// housekeeping is housekeeping_cpumask(HK_TYPE_TIMER), nil = every CPU.
	housekeeping sdk.CPUSet
	// resolution is hrtimer_resolution: TICK_NSEC until the CPUs switch to
	// high-res mode, then 1 ns (HIGH_RES_NSEC). hrtimer_forward() clamps the
	// interval to it.
	resolution int64

	cpus []*cpuBase
	// The timers by id: a slice for the dense ids a host allocates from 1
	// (the hot path's lookup is an index, not a hash), a map for any other.
	byID   []*timer
	sparse map[sdk.TimerID]*timer
	free   []*timer
	seq    uint64 // enqueue sequence for FIFO ties

	// tk and tkSeq model the timekeeper's offsets and clock_was_set_seq;
	// cwsMask are the bases the latest offset change affected.
	tk      sdk.ClockOffsets
	tkSeq   uint32
	cwsMask uint8

	// progCB is the CPU whose call is in progress: device writes are only
	// ever made by the CPU the call runs on. Set at each writing call's
	// entry and cleared at its return (no defer: a call that panics leaves
	// it set, and the next writing call sets it afresh before it can
	// write). prog is that call's Program list: it starts in the first
	// entry inline in progCB's record (opFirst, or irqFirst for the
	// interrupt family) and moves to the overflow buffer of that family
	// (opMore, irqMore) at its second entry. exp is an interrupt-family
	// call's Expired list, the same way. Their headers live here, in a line
	// every call touches, not in the CPU's record.
	progCB *cpuBase
	prog   []ktime.Time
	exp    []sdk.HRExpiry
}

// beginOp starts an operation (Start, Cancel, RetriggerNextEvent) on cb:
// its writes go to the operations' Program buffer.
func (p *Plugin) beginOp(cb *cpuBase) {
	p.progCB, p.prog = cb, cb.opFirst[:0:1]
}

// endCall ends the writing call in progress.
func (p *Plugin) endCall() { p.progCB = nil }

var _ sdk.HRTimerBase = (*Plugin)(nil)

// New returns an unconfigured hrtimer plugin (the sdk.Factory constructor).
func New() sdk.Plugin { return &Plugin{} }

// Factory declares the plugin: its kind, the name `plugin = "hrtimer"`
// selects, and its constructor; Info and plugins/builtin take them from here.
var Factory = sdk.Factory{Kind: sdk.KindHRTimer, Name: "hrtimer", New: New}

// Info describes the plugin.
func (p *Plugin) Info() sdk.Info {
	return sdk.Info{
		Kind:        Factory.Kind,
		Name:        Factory.Name,
		Version:     Version,
		Description: "kernel/time/hrtimer.c per-CPU hrtimer_cpu_base with 8 clock bases, era-selectable hang handling, softirq cache and restart reprogramming",
	}
}

// Schema declares the strategies and cost parameters.
func (p *Plugin) Schema() sdk.Schema { return schema() }

// Configure applies the machine setup and the decoded attributes.
func (p *Plugin) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	cfg, diags := decodeConfig(c)
	if s.CPUs < 1 {
		diags = diags.Errorf("", "hrtimer needs at least one CPU, got %d", s.CPUs)
	}
	if !ktime.ValidHZ(s.HZ) {
		diags = diags.Errorf("", "HZ=%d is not a CONFIG_HZ value (100, 250, 300, 1000)", s.HZ)
	}
	if diags.HasErrors() {
		return diags
	}
	p.cfg = cfg
	p.setup = s
	p.hang = policy.New(sdk.KindHangPolicy, cfg.HangDelay.String()).(sdk.HangPolicy)
	p.restart = policy.New(sdk.KindRestartPolicy, cfg.Restart.String()).(sdk.RestartPolicy)
	p.restartFixed, p.restartDeferred = true, cfg.Restart == RestartDeferred
	p.custom = false
	p.housekeeping = s.HousekeepingSet()
	p.highRes = s.HighRes
	p.resolution = 1
	if !s.HighRes {
		// LOW_RES_NSEC = TICK_NSEC (include/linux/hrtimer_defs.h).
		p.resolution = ktime.TickNsec(s.HZ)
	}
	p.cpus = newCPUBases(s.CPUs)
	p.byID, p.sparse = nil, nil
	p.free = nil
	p.seq = 0
	p.tk, p.tkSeq, p.cwsMask = sdk.ClockOffsets{}, 0, 0
	return diags
}

var _ sdk.PolicyUser = (*Plugin)(nil)

// UsePolicy implements sdk.PolicyUser: the hang policy replaces the one
// hang_delay names (the retry loop stays the era's: the device-driven loop of
// "proportional", the software check of the 2026 strategies), the restart
// policy the one restart names.
func (p *Plugin) UsePolicy(k sdk.Kind, pol sdk.Plugin) bool {
	switch k {
	case sdk.KindHangPolicy:
		h, ok := pol.(sdk.HangPolicy)
		if ok {
			// Not custom: the model leaves every hang to the plugin (it
			// declines an interrupt that would hang, and a CPU with
			// hang_detected), so the policy never meets a modelled answer.
			p.hang = h
		}
		return ok
	case sdk.KindRestartPolicy:
		r, ok := pol.(sdk.RestartPolicy)
		if ok {
			p.restart, p.restartFixed, p.custom = r, false, true
		}
		return ok
	}
	return false
}

// counterNames is the per-CPU counter order of Counters.
var counterNames = []string{
	"nr_events", "nr_retries", "nr_hangs", "max_hang_time",
	"starts", "cancels", "expiries_hard", "expiries_soft",
	"device_writes", "softirq_raises", "retry_passes", "migrated",
}

// Counters reports, per CPU in CPU order, the kernel's statistics with their
// kernel widths (nr_events u32, nr_retries and nr_hangs u16, max_hang_time u32
// in ns: what /proc/timer_list prints) and the plugin's own counts: starts
// (Start calls), cancels (Cancel calls that dequeued a timer), hard and soft
// expiries, device_writes (Program entries), softirq_raises and retry_passes
// (extra passes of the interrupt retry loop, in every era; nr_retries follows
// the kernel, which stopped counting with 2889243848560) and migrated
// (timers another CPU's Start queued on this CPU's base).
func (p *Plugin) Counters() []sdk.Counter {
	out := make([]sdk.Counter, 0, len(p.cpus)*len(counterNames))
	for _, cb := range p.cpus {
		vals := []int64{
			int64(cb.nrEvents), int64(cb.nrRetries), int64(cb.nrHangs), int64(cb.maxHangTime),
			cb.starts, cb.stats.cancels, cb.expiriesHard, cb.stats.expiriesSoft,
			cb.deviceWrites, cb.stats.softirqRaises, cb.stats.retryPasses, cb.stats.migrated,
		}
		for i, n := range counterNames {
			out = append(out, sdk.Counter{Name: n, CPU: int(cb.cpu), Value: vals[i]})
		}
	}
	return out
}

// CPUState is a snapshot of one hrtimer_cpu_base, for traces and debugging
// (the fields /proc/timer_list prints).
type CPUState struct {
	ExpiresNext, SoftirqExpiresNext ktime.Time
	NextTimer, SoftirqNextTimer     sdk.TimerID // 0 when the pointer is NULL
	HresActive, InHrtirq            bool
	HangDetected, SoftirqActivated  bool
	ActiveBases                     uint8
	NrEvents                        uint32
	NrRetries, NrHangs              uint16
	MaxHangTime                     uint32
	Queued                          int // timers queued on all 8 bases
}

// CPUState returns a snapshot of cpu's base.
func (p *Plugin) CPUState(cpu int) CPUState {
	cb := p.cpu(cpu)
	s := CPUState{
		ExpiresNext: cb.expiresNext, SoftirqExpiresNext: cb.softirqExpiresNext,
		HresActive: p.highRes, InHrtirq: cb.inHrtirq, HangDetected: cb.hangDetected,
		SoftirqActivated: cb.softirqActivated, ActiveBases: cb.activeBases,
		NrEvents: cb.nrEvents, NrRetries: cb.nrRetries, NrHangs: cb.nrHangs, MaxHangTime: cb.maxHangTime,
	}
	if cb.nextTimer != nil {
		s.NextTimer = cb.nextTimer.id
	}
	if cb.softirqNextTimer != nil {
		s.SoftirqNextTimer = cb.softirqNextTimer.id
	}
	for i := range cb.bases {
		s.Queued += cb.bases[i].len()
	}
	return s
}

// cpu returns cpu's base; an out-of-range CPU is a host bug.
func (p *Plugin) cpu(cpu int) *cpuBase {
	if uint(cpu) < uint(len(p.cpus)) {
		return p.cpus[cpu] // (the test is the index's bounds check)
	}
	p.badCPU(cpu)
	return nil // (never reached)
}

// badCPU is cpu's panic, out of line so that cpu inlines.
//
//go:noinline
func (p *Plugin) badCPU(cpu int) {
	panic(fmt.Sprintf("hrtimer: cpu %d out of range [0,%d) (Configure not called?)", cpu, len(p.cpus)))
}

// denseIDs bounds the ids kept in Plugin.byID: a million pointers (8 MB) at
// most, grown only as far as the largest id used.
const denseIDs = 1 << 20

// lookup returns the timer with id, or nil.
func (p *Plugin) lookup(id sdk.TimerID) *timer {
	if uint64(id) < uint64(len(p.byID)) {
		return p.byID[id]
	}
	if uint64(id) < denseIDs {
		return nil
	}
	return p.sparse[id]
}

// setTimer files t under id; nil removes the id.
func (p *Plugin) setTimer(id sdk.TimerID, t *timer) {
	if uint64(id) >= denseIDs {
		if t == nil {
			delete(p.sparse, id)
			return
		}
		if p.sparse == nil {
			p.sparse = make(map[sdk.TimerID]*timer)
		}
		p.sparse[id] = t
		return
	}
	if n := int(id) + 1; n > len(p.byID) {
		if t == nil {
			return
		}
		p.byID = append(p.byID, make([]*timer, n-len(p.byID))...)
	}
	p.byID[id] = t
}

// timerFor returns the timer with id, creating it on cpu as __hrtimer_setup()
// does (timer->base = this CPU's base) when it is new.
func (p *Plugin) timerFor(id sdk.TimerID, cpu int) *timer {
	if uint64(id) < uint64(len(p.byID)) {
		if t := p.byID[id]; t != nil {
			return t // the common case, inlined
		}
	}
	return p.newTimer(id, cpu)
}

// newTimer is timerFor's path for an id not in byID: a sparse id's timer, or
// a new one.
func (p *Plugin) newTimer(id sdk.TimerID, cpu int) *timer {
	if t := p.lookup(id); t != nil {
		return t
	}
	var t *timer
	if n := len(p.free); n > 0 {
		t = p.free[n-1]
		p.free = p.free[:n-1]
		*t = timer{}
	} else {
		t = new(timer)
	}
	t.id, t.cpu, t.idx = id, int32(cpu), -1
	p.setTimer(id, t)
	return t
}

// reclaimBatch bounds a CPU's reclaim list between interrupts.
const reclaimBatch = 256

// reclaimLazy is the length of a CPU's reclaim list from which its interrupt
// recycles the listed timers. Most timers a host stops it starts again soon
// (a task's sleeper, a re-armed POSIX timer): listed once, they stay listed
// while they come and go, and no interrupt walks the list for them. Timers
// the host never uses again pile up to this bound at most. Recycling is not
// observable (a recycled ID starts afresh exactly as its old timer would go
// on: not queued, not running, no next pointer to it), so when it happens
// changes nothing but memory.
const reclaimLazy = 32

// reclaimLazily recycles cb's listed timers at now once reclaimLazy are
// listed.
func (p *Plugin) reclaimLazily(cb *cpuBase, now ktime.Time) {
	if cb.nReclaim >= reclaimLazy {
		p.reclaim(cb, now)
	}
}

// markInactive queues t for recycling once it is no longer referenced.
func (p *Plugin) markInactive(t *timer) {
	if t.candidate {
		return
	}
	t.candidate = true
	cb := p.cpus[t.cpu]
	cb.reclaim = append(cb.reclaim, t)
	cb.nReclaim = uint16(min(len(cb.reclaim), math.MaxUint16))
}

// reclaim recycles cb's inactive timers whose callbacks have returned by now
// and that no next pointer references. The host passes IDs it may never reuse
// (one per nanosleep, say); without this the timer map would grow for the
// whole run. A recycled ID simply starts afresh if the host uses it again.
func (p *Plugin) reclaim(cb *cpuBase, now ktime.Time) {
	all := cb.reclaim
	kept := all[:0]
	for _, t := range all {
		switch {
		case t.enqueued:
			t.candidate = false // active again; re-listed when it goes inactive
		case t.refs == 0 && t.runEnd <= now:
			p.setTimer(t.id, nil)
			t.candidate = false
			p.free = append(p.free, t)
		default:
			kept = append(kept, t)
		}
	}
	for i := len(kept); i < len(all); i++ {
		all[i] = nil // a few entries: no call of the runtime's clear
	}
	cb.reclaim = kept
	cb.nReclaim = uint16(min(len(kept), math.MaxUint16))
}
