// SPDX-License-Identifier: GPL-2.0

//go:build kernel_oracle

package kwheel

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/oracle/ktimer"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// Factory registers the plugin.
var Factory = sdk.Factory{Kind: sdk.KindTimerBase, Name: "kwheel", New: New}

// New returns an unconfigured kwheel.
func New() sdk.Plugin { return &KWheel{} }

const attrLibrary = "library"

// costNames are the wheel plugin's cost attributes kwheel charges the same
// way: per (re)queueing mod_timer(), per dequeue, per expired timer, per
// collect pass of __run_timers(). The kernel's code has no cost, and kwheel
// cannot see the levels the next-expiry search scans: scan_cost_ns is not
// charged.
var costNames = []string{"enqueue_cost_ns", "dequeue_cost_ns", "expiry_cost_ns", "iteration_cost_ns"}

// KWheel is a TimerBase run by the kernel's timer.c. One library holds one
// machine: a process configures one KWheel per library at a time.
type KWheel struct {
	lib   *ktimer.Lib
	cpus  int
	cost  [4]int64 // ps, in costNames order
	reset bool
	slots map[sdk.TimerID]*slot
	byK   []sdk.TimerID // the SDK id of each library timer slot
	free  []uint32
	next  uint32
	pend  []int // timers queued per CPU
	stats []stats
}

// slot is one SDK timer as the library holds it.
type slot struct {
	k       uint32
	flags   sdk.TimerFlags
	expires uint64
	cbCost  int64
	cpu     int
	idx     int
	pending bool
}

type stats struct {
	starts, stops, runs, expiries, iterations, migrated, remoteRuns, remoteExpiries int64
	maxGap                                                                          uint64
}

// owner is the KWheel configured last on each library: the library's state
// is process-wide, so an older instance's calls would corrupt it.
var owner = map[*ktimer.Lib]*KWheel{}

func libraryPath(path string) string {
	if path != "" {
		return path
	}
	return ktimer.DefaultPath()
}

// Info names the kernel release and tree the default library was built
// from (build-info.txt beside it).
func (w *KWheel) Info() sdk.Info {
	desc := "the kernel's kernel/time/timer.c run as the wheel (GPL-2.0, out of process)"
	if b, err := os.ReadFile(strings.TrimSuffix(ktimer.DefaultPath(), "libktimer-oracle.so") + "build-info.txt"); err == nil {
		desc += ": " + strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\n", "; ")), " ")
	} else {
		desc += "; library not built: make kernel-oracle"
	}
	return sdk.Info{Kind: sdk.KindTimerBase, Name: "kwheel", Version: Version, Description: desc}
}

// Schema: the library and the wheel's cost attributes kwheel charges.
func (w *KWheel) Schema() sdk.Schema {
	attrs := []sdk.Attribute{{
		Name: attrLibrary, Type: sdk.TypeString,
		Doc: "libktimer-oracle.so to run (make kernel-oracle [KERNEL_SRC=DIR ORACLE_OUT=DIR]); empty: " +
			"$KERNEL_ORACLE_LIB or the repository's bin/oracle. Its CONFIG_HZ must be the machine's.",
	}}
	for _, a := range wheel.New().Schema().Attributes {
		for _, n := range costNames {
			if a.Name == n {
				attrs = append(attrs, a)
			}
		}
	}
	return sdk.Schema{Attributes: attrs}
}

// Configure loads the library and checks it fits the machine.
func (w *KWheel) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	var d sdk.Diagnostics
	r := c.Reader()
	path := r.String(attrLibrary)
	for i, n := range costNames {
		// A value r cannot read is 0 here and an error in r.Diagnostics().
		if f := r.Float(n); f < 0 || f > 1e9 {
			d = d.Errorf(n, "%s = %g is not a cost in ns (0 to 1e9)", n, f)
		} else {
			w.cost[i] = int64(math.Round(f * 1000))
		}
	}
	if d = append(d, r.Diagnostics()...); d.HasErrors() {
		return d
	}
	lib, err := ktimer.Open(libraryPath(path))
	if err != nil {
		return d.Errorf(attrLibrary, "%v", err)
	}
	if lib.HZ() != s.HZ {
		return d.Errorf(attrLibrary, "kwheel: %s was built with CONFIG_HZ=%d, the machine has HZ %d: build one with make kernel-oracle ORACLE_HZ=%d ORACLE_OUT=DIR",
			lib.Path(), lib.HZ(), s.HZ, s.HZ)
	}
	if s.CPUs < 1 || s.CPUs > lib.MaxCPUs() {
		return d.Errorf("", "kwheel: %d CPUs; the kernel oracle runs 1 to %d", s.CPUs, lib.MaxCPUs())
	}
	*w = KWheel{lib: lib, cpus: s.CPUs, cost: w.cost, slots: map[sdk.TimerID]*slot{},
		pend: make([]int, s.CPUs), stats: make([]stats, s.CPUs)}
	owner[lib] = w
	return d
}

// enter checks the instance still owns its library and brings the machine
// up at the first call's jiffies (init_timers()).
func (w *KWheel) enter(cpu int, j uint64) {
	if w.lib == nil {
		panic("kwheel: call before Configure")
	}
	if owner[w.lib] != w {
		panic(fmt.Sprintf("kwheel: another kwheel instance in this process configured %s: one machine per library", w.lib.Path()))
	}
	if cpu < 0 || cpu >= w.cpus {
		panic("kwheel: cpu out of range")
	}
	if !w.reset {
		if err := w.lib.Reset(w.cpus, j); err != nil {
			panic(err)
		}
		w.reset = true
	}
}

// ns rounds a cost in ps to ns, half up.
func ns(ps int64) int64 { return (ps + 500) / 1000 }

func kflags(f sdk.TimerFlags) ktimer.Flags {
	var k ktimer.Flags
	if f&sdk.TimerPinned != 0 {
		k |= ktimer.Pinned
	}
	if f&sdk.TimerDeferrable != 0 {
		k |= ktimer.Deferrable
	}
	return k
}

// alloc gives id a library timer slot, set up afresh at its next Mod.
func (w *KWheel) alloc(id sdk.TimerID) *slot {
	var k uint32
	if n := len(w.free); n > 0 {
		k, w.free = w.free[n-1], w.free[:n-1]
	} else {
		if w.next >= ktimer.MaxTimers {
			panic(fmt.Sprintf("kwheel: more than %d timers queued at once", ktimer.MaxTimers))
		}
		k = w.next
		w.next++
		w.byK = append(w.byK, 0)
	}
	w.lib.Forget(k)
	w.byK[k] = id
	s := &slot{k: k}
	w.slots[id] = s
	return s
}

// release forgets a timer no longer queued.
func (w *KWheel) release(id sdk.TimerID, s *slot) {
	delete(w.slots, id)
	w.free = append(w.free, s.k)
}

// ModTimer is mod_timer() on cpu.
func (w *KWheel) ModTimer(cpu int, j uint64, t sdk.WheelTimer) sdk.WheelOpResult {
	w.enter(cpu, j)
	s := w.slots[t.ID]
	if s != nil && s.pending && s.flags != t.Flags {
		// timer_setup() fixes a kernel timer's flags; the SDK may change
		// them: delete and start afresh.
		w.lib.Del(cpu, j, s.k)
		w.pend[s.cpu]--
		w.release(t.ID, s)
		s = nil
	}
	if s == nil {
		s = w.alloc(t.ID)
	}
	was := s.pending
	same := was && s.expires == t.Expires
	ret, q := w.lib.Mod(cpu, j, s.k, t.Expires, kflags(t.Flags), t.Period)
	kept := was && q.CPU == s.cpu && q.Index == s.idx
	var cost int64
	if !same {
		cost += w.cost[0]
		if was && !kept {
			cost += w.cost[1]
		}
	}
	if was {
		w.pend[s.cpu]--
	}
	w.pend[q.CPU]++
	if !kept {
		w.stats[q.CPU].starts++
	}
	s.flags, s.expires, s.cbCost, s.cpu, s.idx, s.pending = t.Flags, t.Expires, t.CallbackCost, q.CPU, q.Index, true
	r := sdk.WheelOpResult{Cost: ns(cost), WasPending: ret, BucketExpiry: q.BucketExpiry, Index: q.Index}
	if q.CPU != cpu {
		r.Moved, r.CPU = true, q.CPU
		w.stats[q.CPU].migrated++
	}
	r.State = w.state(q.CPU, j)
	return r
}

// DelTimer is timer_delete() on cpu.
func (w *KWheel) DelTimer(cpu int, j uint64, id sdk.TimerID) sdk.WheelOpResult {
	w.enter(cpu, j)
	s := w.slots[id]
	if s == nil {
		return sdk.WheelOpResult{State: w.state(cpu, j)}
	}
	ret := w.lib.Del(cpu, j, s.k)
	var cost int64
	if ret {
		cost = w.cost[1]
		w.pend[s.cpu]--
		w.stats[s.cpu].stops++
	}
	w.release(id, s)
	return sdk.WheelOpResult{Cost: ns(cost), WasPending: ret, State: w.state(cpu, j)}
}

// expired turns the library's callbacks into the SDK's: costs charged as
// the wheel plugin charges them (a pass per collected jiffy of a base with
// expiries: a pass that collects nothing, after a dequeue left next_expiry
// early, is not seen and not charged), timers not re-armed forgotten.
func (w *KWheel) expired(cpu int, ex []ktimer.Expiry) (out []sdk.WheelExpiry, cost int64, passes uint64) {
	if len(ex) > 0 {
		out = make([]sdk.WheelExpiry, len(ex))
	}
	var last uint64
	lastBase := -1
	for i, e := range ex {
		id := w.byK[e.ID]
		s := w.slots[id]
		if e.Base != lastBase || e.Clk != last {
			passes++
			cost += w.cost[3]
			last, lastBase = e.Clk, e.Base
		}
		cost += w.cost[2]
		out[i] = sdk.WheelExpiry{ID: id, Offset: ns(cost), Jiffy: e.Clk, Rearmed: e.Rearmed, NewExpires: e.NewExpires}
		cost += s.cbCost * 1000
		w.pend[e.CPU]--
		w.stats[e.CPU].expiries++
		if e.Rearmed {
			cost += w.cost[0]
			_, c, idx := w.lib.Timer(e.ID)
			s.expires, s.cpu, s.idx = e.NewExpires, c, idx
			w.pend[c]++
			w.stats[c].starts++
			continue
		}
		s.pending = false
		w.release(id, s)
	}
	return out, cost, passes
}

// gap is how far jiffies is past cpu's base clocks before a run.
func (w *KWheel) gap(cpu int, j uint64) uint64 {
	var g uint64
	for b := 0; b < ktimer.NrBases; b++ {
		if c := w.lib.Base(cpu, b).Clk; int64(j-c) >= 0 && j-c > g {
			g = j - c
		}
	}
	return g
}

// RunTimers is run_timer_softirq() on cpu.
func (w *KWheel) RunTimers(cpu int, j uint64) sdk.RunTimersResult {
	w.enter(cpu, j)
	gap := w.gap(cpu, j)
	out, cost, passes := w.expired(cpu, w.lib.Run(cpu, j))
	st := &w.stats[cpu]
	st.runs++
	st.iterations += int64(passes)
	st.maxGap = max(st.maxGap, gap)
	return sdk.RunTimersResult{Expired: out, Cost: ns(cost), Gap: gap, Iterations: passes, State: w.state(cpu, j)}
}

// ExpireRemote is timer_expire_remote(cpu), run on the next CPU.
func (w *KWheel) ExpireRemote(cpu int, j uint64) sdk.RunTimersResult {
	w.enter(cpu, j)
	out, cost, passes := w.expired(cpu, w.lib.ExpireRemote((cpu+1)%w.cpus, cpu, j))
	st := &w.stats[cpu]
	st.remoteRuns++
	st.remoteExpiries += int64(len(out))
	return sdk.RunTimersResult{Expired: out, Cost: ns(cost), Iterations: passes, State: w.state(cpu, j)}
}

// NextTimerInterrupt is get_next_timer_interrupt() on cpu. The SDK asks for
// the first event of BASE_LOCAL and BASE_GLOBAL, what
// fetch_next_timer_interrupt() finds: the kernel's answer when it is at
// most a jiffy away, else the earlier of its local answer and the global
// event it handed to the timer migration hierarchy (the host's model of
// the hierarchy takes it from there).
func (w *KWheel) NextTimerInterrupt(cpu int, j uint64) sdk.NextTimerResult {
	w.enter(cpu, j)
	n := w.lib.NextEvent(cpu, j, false)
	next := n.NextJ
	if n.TmigrCalled && n.TmigrGlobalJ != ktimer.NoExpiry && (next == ktimer.NoExpiry || int64(n.TmigrGlobalJ-next) < 0) {
		next = n.TmigrGlobalJ
	}
	return sdk.NextTimerResult{Next: next, State: w.state(cpu, j)}
}

// raiseAt is the first jiffy at or after j at which the kernel's own
// run_local_timers() would raise TIMER_SOFTIRQ on cpu as the bases stand
// (NoExpiry: not within 2^31 jiffies), found by asking it: at j, then at
// doubling distances, then by bisection. The host decides each tick's raise
// from it without a call, so a patch to the raise rule takes effect; the
// search assumes the rule, once true at a jiffy, stays true at later ones
// (time_after_eq() against base state, as every release has it).
func (w *KWheel) raiseAt(cpu int, j uint64) uint64 {
	if w.lib.Tick(cpu, j) {
		return j
	}
	lo, d := j, uint64(1)
	for !w.lib.Tick(cpu, j+d) {
		lo = j + d
		if d >= 1<<31 {
			return sdk.NoExpiry
		}
		d *= 2
	}
	hi := j + d // raised at hi, not at lo
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if w.lib.Tick(cpu, mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// state is cpu's WheelState at jiffies j from the kernel's bases.
func (w *KWheel) state(cpu int, j uint64) sdk.WheelState {
	st := sdk.WheelState{Pending: w.pend[cpu], Split: true, NextExpiry: sdk.NoExpiry,
		LocalNext: sdk.NoExpiry, GlobalNext: sdk.NoExpiry, RaiseAt: w.raiseAt(cpu, j)}
	for b := 0; b < ktimer.NrBases; b++ {
		kb := w.lib.Base(cpu, b)
		if !kb.FreshPending {
			continue
		}
		switch b {
		case ktimer.BaseLocal:
			st.LocalNext = kb.FreshNext
		case ktimer.BaseGlobal:
			st.GlobalNext = kb.FreshNext
		}
	}
	st.NextExpiry = st.LocalNext
	if st.GlobalNext != sdk.NoExpiry && (st.NextExpiry == sdk.NoExpiry || int64(st.GlobalNext-st.NextExpiry) < 0) {
		st.NextExpiry = st.GlobalNext
	}
	return st
}

// counterNames are the wheel plugin's counters, in its order; the levels
// wheel never cascades (cascades and timers_cascaded stay 0).
var counterNames = []string{"starts", "stops", "runs", "expiries", "iterations", "cascades", "timers_cascaded", "max_gap",
	"migrated", "remote_runs", "remote_expiries"}

// Counters reports the wheel plugin's counters.
func (w *KWheel) Counters() []sdk.Counter {
	var out []sdk.Counter
	for _, name := range counterNames {
		for cpu, st := range w.stats {
			var v int64
			switch name {
			case "starts":
				v = st.starts
			case "stops":
				v = st.stops
			case "runs":
				v = st.runs
			case "expiries":
				v = st.expiries
			case "iterations":
				v = st.iterations
			case "max_gap":
				v = int64(st.maxGap)
			case "migrated":
				v = st.migrated
			case "remote_runs":
				v = st.remoteRuns
			case "remote_expiries":
				v = st.remoteExpiries
			}
			out = append(out, sdk.Counter{Name: name, CPU: cpu, Value: v})
		}
	}
	return out
}

var _ sdk.RemoteTimerBase = (*KWheel)(nil)
