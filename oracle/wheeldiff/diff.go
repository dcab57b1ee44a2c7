// SPDX-License-Identifier: GPL-2.0

//go:build kernel_oracle

package wheeldiff

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
	"github.com/tickemu/tickemu/oracle/ktimer"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// opSize is the number of bytes one operation is decoded from.
const opSize = 8

// Machine is the machine every sequence runs on.
type Machine struct {
	CPUs   int
	Timers int // timer ids 0..Timers-1
}

// DefaultMachine is four CPUs and 48 timers: enough for buckets to hold
// several timers and for timers to move between CPUs.
var DefaultMachine = Machine{CPUs: 4, Timers: 48}

// Mismatch is one difference between the kernel and the plugin. A sequence
// stops at its first mismatch (the two states have diverged).
type Mismatch struct {
	Op      int    // index of the operation in the sequence
	Desc    string // the operation
	What    string // what differed
	History []string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("op %d %s: %s\n  preceding ops:\n    %s", m.Op, m.Desc, m.What,
		strings.Join(m.History, "\n    "))
}

// Runner holds the kernel oracle and a fresh plugin per sequence.
type Runner struct {
	lib *ktimer.Lib
	m   Machine
	cfg sdk.Config
	hz  int
	// Compared counts the operations run through both and compared.
	Compared int
	// RawClockDiffs counts base comparisons whose clocks differed before
	// forwarding (see compareState).
	RawClockDiffs int
	// Wakeups counts the kernel's remote wake-ups (wake_up_nohz_cpu() of
	// another CPU: a new first timer on a base marked idle).
	Wakeups uint64
}

// NewRunner configures the plugin for the oracle's release and HZ.
func NewRunner(lib *ktimer.Lib, m Machine) (*Runner, error) {
	if m.CPUs < 1 || m.CPUs > lib.MaxCPUs() || m.Timers < 1 || m.Timers > ktimer.MaxTimers {
		return nil, fmt.Errorf("wheeldiff: machine %+v out of range", m)
	}
	rel, err := releaseOf(lib.Release())
	if err != nil {
		return nil, err
	}
	// The host's Config for a wheel block that sets nothing at the library's
	// release: the schema's defaults, then each versioned attribute's era.
	schema := wheel.New().Schema()
	cfg, diags := config.DecodeBody(hcl.EmptyBody(), nil, schema, "wheel block")
	if diags.HasErrors() {
		return nil, fmt.Errorf("wheeldiff: %s", diags.Error())
	}
	for _, a := range schema.Attributes {
		if v, ok := kernelversion.ValueAt(a.Eras, rel); ok && len(a.Eras) > 0 {
			cfg[a.Name] = v
		}
	}
	return &Runner{lib: lib, m: m, cfg: cfg, hz: lib.HZ()}, nil
}

// Config is the plugin configuration the runner uses (the wheel's eras at
// the oracle's release, and any Set).
func (r *Runner) Config() sdk.Config { return r.cfg }

// Set overrides a plugin attribute: to check that a setting of the plugin
// reproduces what a patched kernel does.
func (r *Runner) Set(name, value string) { r.cfg[name] = value }

// releaseOf reads the library's UTS release ("6.12.118") as release
// 6.12.118: the wheel's eras at its series, with the stable backports they
// name up to that point release.
func releaseOf(uts string) (kernelversion.Release, error) {
	r, err := eras.ParseUname(uts)
	if err != nil {
		return kernelversion.Release{}, fmt.Errorf("wheeldiff: %v", err)
	}
	return r, nil
}

// seq is one sequence's state on both sides.
type seq struct {
	r       *Runner
	w       *wheel.Wheel
	j       uint64
	flags   []ktimer.Flags // per timer id, fixed at its first start
	started []bool
	idle    []bool
	hist    []string
	warned  uint64
}

// unusedID is a timer id never started: DelTimer of it reads a CPU's
// wheel state without changing anything.
const unusedID = sdk.TimerID(1 << 40)

// Run decodes ops and runs them; it returns the first mismatch, if any.
func (r *Runner) Run(ops []byte) *Mismatch {
	j0 := r.lib.InitialJiffies()
	if err := r.lib.Reset(r.m.CPUs, j0); err != nil {
		return &Mismatch{Op: -1, What: err.Error()}
	}
	w := wheel.New().(*wheel.Wheel)
	setup := sdk.Setup{CPUs: r.m.CPUs, HZ: r.hz, HighRes: true, Seed: 1, TimerMigration: true}
	if d := w.Configure(setup, r.cfg); d.HasErrors() {
		return &Mismatch{Op: -1, What: fmt.Sprintf("plugin configuration %v: %v", r.cfg, d)}
	}
	s := &seq{r: r, w: w, j: j0, flags: make([]ktimer.Flags, r.m.Timers), started: make([]bool, r.m.Timers),
		idle: make([]bool, r.m.CPUs)}
	// The kernel brings every CPU's bases up at INITIAL_JIFFIES
	// (init_timers()); the plugin brings a CPU's bases up at its first call.
	for cpu := 0; cpu < r.m.CPUs; cpu++ {
		w.RunTimers(cpu, j0)
		r.lib.Run(cpu, j0)
	}
	if m := s.compareState(-1, "start"); m != nil {
		return m
	}
	for i := 0; i+opSize <= len(ops); i += opSize {
		n := i / opSize
		desc, what := s.step(ops[i : i+opSize])
		if traceOps {
			fmt.Fprintf(os.Stderr, "op %d %s\n", n, desc)
		}
		if what == "" {
			what = s.checkWarnings()
		}
		if what != "" {
			return s.mismatch(n, desc, what)
		}
		if m := s.compareState(n, desc); m != nil {
			return m
		}
		r.Compared++
		s.hist = append(s.hist, desc)
		if len(s.hist) > 12 {
			s.hist = s.hist[1:]
		}
	}
	// Every timer is queued on the calling CPU (the pull model), and a
	// callback's re-arm stays on the base it ran from: no enqueue reaches
	// another CPU's idle base, so the kernel sends no remote wake-up (the
	// plugin has none to report; the host models the IPI).
	var wakeups uint64
	for cpu := 0; cpu < r.m.CPUs; cpu++ {
		wakeups += r.lib.Wakeups(cpu)
	}
	r.Wakeups += wakeups
	if wakeups != 0 {
		return s.mismatch(len(ops)/opSize, "end of sequence", fmt.Sprintf("the kernel sent %d remote wake-ups (wake_up_nohz_cpu())", wakeups))
	}
	return nil
}

func (s *seq) mismatch(n int, desc, what string) *Mismatch {
	return &Mismatch{Op: n, Desc: desc, What: what, History: append([]string(nil), s.hist...)}
}

func (s *seq) checkWarnings() string {
	n, file, line := s.r.lib.Warnings()
	if n != s.warned {
		s.warned = n
		return fmt.Sprintf("the kernel hit WARN() (%d so far; first at %s:%d)", n, file, line)
	}
	return ""
}

// Operation kinds, by the low 4 bits of an op's first byte.
const (
	kMod        = iota // 0-5
	kDel        = 6
	kAdvance    = 7 // 7-8
	kRun        = 9 // 9-10
	kTick       = 11
	kIdle       = 12
	kWake       = 13
	kRemote     = 14
	kAdvanceFar = 15
)

// step runs one operation on both sides and compares their answers; it
// returns the operation's description and what differed ("" if nothing).
func (s *seq) step(op []byte) (desc, what string) {
	lib, w := s.r.lib, s.w
	n := s.r.m.CPUs
	kind := int(op[0] & 15)
	cpu := int(op[1]) % n
	id := uint32(op[2]) % uint32(s.r.m.Timers)
	fb := op[3]
	p := binary.LittleEndian.Uint32(op[4:])
	switch {
	case kind <= 5:
		if !s.started[id] {
			var f ktimer.Flags
			if fb&3 == 1 {
				f |= ktimer.Pinned
			}
			if fb&12 == 4 {
				f |= ktimer.Deferrable
			}
			if fb&16 != 0 {
				f |= ktimer.IRQSafe
			}
			s.flags[id], s.started[id] = f, true
		}
		f := s.flags[id]
		expires := s.expiry(p)
		period := uint64(0)
		if fb&0xc0 == 0xc0 {
			period = 1 + uint64(p>>16)%200
		}
		desc = fmt.Sprintf("mod cpu%d j=%d timer %d (%s) expires=j%+d period=%d", cpu, s.j, id, flagNames(f),
			int64(expires-s.j), period)
		kw, kq := lib.Mod(cpu, s.j, id, expires, f, period)
		gr := w.ModTimer(cpu, s.j, sdk.WheelTimer{ID: sdk.TimerID(id), Expires: expires, Flags: sdkFlags(f), Period: period})
		gon := cpu
		if gr.Moved {
			gon = gr.CPU
		}
		switch {
		case kw != gr.WasPending:
			return desc, fmt.Sprintf("mod_timer() returned %v, plugin WasPending %v", kw, gr.WasPending)
		case kq.CPU != gon || kq.Index != gr.Index || kq.BucketExpiry != gr.BucketExpiry:
			return desc, fmt.Sprintf("kernel queued the timer on cpu%d index %d bucket %s, plugin on cpu%d index %d bucket %s",
				kq.CPU, kq.Index, rel(kq.BucketExpiry, s.j), gon, gr.Index, rel(gr.BucketExpiry, s.j))
		}
	case kind == kDel:
		desc = fmt.Sprintf("del cpu%d j=%d timer %d", cpu, s.j, id)
		kw := lib.Del(cpu, s.j, id)
		gr := w.DelTimer(cpu, s.j, sdk.TimerID(id))
		if kw != gr.WasPending {
			return desc, fmt.Sprintf("timer_delete() returned %v, plugin WasPending %v", kw, gr.WasPending)
		}
	case kind == kAdvance || kind == kAdvance+1:
		d := 1 + uint64(p)%8
		s.j += d
		desc = fmt.Sprintf("advance %d to j=%d", d, s.j)
	case kind == kAdvanceFar:
		var d uint64
		switch p & 3 {
		case 0:
			d = 1 + uint64(p>>2)%64
		case 1:
			d = 1 + uint64(p>>2)%1000
		case 2:
			d = 1 + uint64(p>>2)%100000
		default:
			d = 1 + uint64(p>>2)%(1<<22)
		}
		s.j += d
		desc = fmt.Sprintf("advance %d to j=%d", d, s.j)
	case kind == kRun || kind == kRun+1:
		desc = fmt.Sprintf("run_timer_softirq cpu%d j=%d", cpu, s.j)
		ke := lib.Run(cpu, s.j)
		gr := w.RunTimers(cpu, s.j)
		if d := diffExpiries(ke, gr.Expired); d != "" {
			return desc, d
		}
	case kind == kTick:
		desc = fmt.Sprintf("run_local_timers cpu%d j=%d", cpu, s.j)
		st := w.DelTimer(cpu, s.j, unusedID).State
		graise := int64(s.j-st.RaiseAt) >= 0
		if kr := lib.Tick(cpu, s.j); kr != graise {
			return desc, fmt.Sprintf("kernel raised TIMER_SOFTIRQ: %v; plugin RaiseAt %s says %v", kr, rel(st.RaiseAt, s.j), graise)
		}
	case kind == kIdle:
		desc = fmt.Sprintf("idle entry cpu%d j=%d", cpu, s.j)
		return desc, s.idleEntry(cpu)
	case kind == kWake:
		desc = fmt.Sprintf("idle exit cpu%d j=%d", cpu, s.j)
		lib.ClearIdle(cpu, s.j)
		s.idle[cpu] = false
	case kind == kRemote:
		target := int(id) % n
		on := cpu
		if on == target {
			on = (on + 1) % n
		}
		desc = fmt.Sprintf("timer_expire_remote(cpu%d) on cpu%d j=%d", target, on, s.j)
		ke := lib.ExpireRemote(on, target, s.j)
		gr := w.ExpireRemote(target, s.j)
		if d := diffExpiries(ke, gr.Expired); d != "" {
			return desc, d
		}
	}
	return desc, ""
}

// expiry decodes a timer's expiry relative to jiffies from p: mostly
// within the first levels, sometimes far, in the past, at a level
// boundary or beyond the wheel's cutoff.
func (s *seq) expiry(p uint32) uint64 {
	v := uint64(p >> 3)
	switch p & 7 {
	case 0, 1, 2:
		return s.j + v%64
	case 3:
		return s.j + v%512
	case 4:
		return s.j + v%4096
	case 5:
		return s.j + v%(1<<18)
	case 6:
		return s.j + v%(1<<26)
	}
	switch v & 3 {
	case 0: // already expired
		return s.j - (v>>2)%100
	case 1: // beyond WHEEL_TIMEOUT_CUTOFF (LVL_START(LVL_DEPTH))
		return s.j + 63<<24 + (v>>2)%100000
	case 2: // around a level's start, LVL_START(n) = 63 << 3(n-1)
		lvl := 1 + (v>>2)%8
		return s.j + 63<<(3*(lvl-1)) + (v>>5)%3 - 1
	}
	return s.j
}

// idleEntry is the tick's idle entry: tick_nohz_next_event() asks
// get_next_timer_interrupt(), tick_nohz_stop_tick() then calls
// timer_base_try_to_set_idle(); the plugin answers NextTimerInterrupt once.
func (s *seq) idleEntry(cpu int) string {
	lib, j := s.r.lib, s.j
	kn := lib.NextEvent(cpu, j, false)
	gr := s.w.NextTimerInterrupt(cpu, j)
	st := gr.State
	// The plugin answers the first event of BASE_LOCAL and BASE_GLOBAL,
	// the kernel's fetch_next_timer_interrupt(); the kernel's tick answer
	// is then BASE_LOCAL's alone unless that event is at most a jiffy
	// away, the global one going to the timer-migration hierarchy
	// (whose stand-in answers as if another CPU stayed active).
	idlePossible := gr.Next == sdk.NoExpiry || int64(gr.Next-(j+1)) > 0
	wantNext, wantGlobal := gr.Next, sdk.NoExpiry
	if idlePossible {
		wantNext = st.LocalNext
		if st.GlobalNext != sdk.NoExpiry && (st.LocalNext == sdk.NoExpiry || int64(st.GlobalNext-st.LocalNext) < 0) {
			wantGlobal = st.GlobalNext
		}
	}
	if kn.NextJ != wantNext {
		return fmt.Sprintf("get_next_timer_interrupt() = %s, want %s (plugin: next %s, local %s, global %s)",
			rel(kn.NextJ, j), rel(wantNext, j), rel(gr.Next, j), rel(st.LocalNext, j), rel(st.GlobalNext, j))
	}
	if kn.TmigrCalled != idlePossible {
		return fmt.Sprintf("kernel called the migration hierarchy: %v; plugin's next event %s says idle possible: %v",
			kn.TmigrCalled, rel(gr.Next, j), idlePossible)
	}
	if idlePossible && kn.TmigrGlobalJ != wantGlobal {
		return fmt.Sprintf("kernel handed global event %s to the hierarchy, plugin's global next %s (local %s)",
			rel(kn.TmigrGlobalJ, j), rel(wantGlobal, j), rel(st.LocalNext, j))
	}
	wasIdle := s.idle[cpu]
	ki := lib.NextEvent(cpu, j, true)
	if !wasIdle && ki.NextJ != kn.NextJ {
		return fmt.Sprintf("timer_base_try_to_set_idle() = %s after get_next_timer_interrupt() = %s",
			rel(ki.NextJ, j), rel(kn.NextJ, j))
	}
	wantIdle := wasIdle || idlePossible
	if ki.Idle != wantIdle {
		return fmt.Sprintf("kernel base idle: %v, plugin's next event %s says %v", ki.Idle, rel(gr.Next, j), wantIdle)
	}
	s.idle[cpu] = ki.Idle
	return ""
}

// compareState compares every CPU's bases and wheel state.
func (s *seq) compareState(n int, desc string) *Mismatch {
	lib, j := s.r.lib, s.j
	for cpu := 0; cpu < s.r.m.CPUs; cpu++ {
		gb := s.w.Bases(cpu)
		if len(gb) != ktimer.NrBases {
			return s.mismatch(n, desc, fmt.Sprintf("cpu%d: plugin has %d bases, want %d", cpu, len(gb), ktimer.NrBases))
		}
		count := 0
		var fresh [ktimer.NrBases]uint64
		for b := 0; b < ktimer.NrBases; b++ {
			kb, g := lib.Base(cpu, b), gb[b]
			if kb.Clk != g.Clk {
				s.r.RawClockDiffs++
			}
			count += g.Count
			fresh[b] = sdk.NoExpiry
			if kb.FreshPending {
				fresh[b] = kb.FreshNext
			}
			name := baseNames[b]
			switch {
			// The kernel's mod_timer() of a timer that is not queued
			// forwards the base the timer was last queued on
			// (lock_timer_base(); forward_timer_base()); the plugin
			// forgets a timer once it is off the wheel. Forwarding is
			// path-independent (forward to j1 then to j2 equals forward
			// to j2) and every reader of clk forwards first or never
			// looks below next_expiry, so clocks are compared forwarded
			// to jiffies; a raw difference is counted apart.
			case forwarded(kb.Clk, kb.NextExpiry, j) != forwarded(g.Clk, g.NextExpiry, j):
				return s.mismatch(n, desc, fmt.Sprintf("cpu%d %s: clk kernel %s, plugin %s (next_expiry %s, %s)", cpu, name,
					rel(kb.Clk, j), rel(g.Clk, j), rel(kb.NextExpiry, j), rel(g.NextExpiry, j)))
			case kb.Recalc != g.Recalc || kb.TimersPending != g.TimersPending:
				return s.mismatch(n, desc, fmt.Sprintf("cpu%d %s: next_expiry_recalc/timers_pending kernel %v/%v, plugin %v/%v",
					cpu, name, kb.Recalc, kb.TimersPending, g.Recalc, g.TimersPending))
			case kb.NextExpiry != g.NextExpiry:
				return s.mismatch(n, desc, fmt.Sprintf("cpu%d %s: next_expiry kernel %s, plugin %s", cpu, name, rel(kb.NextExpiry, j), rel(g.NextExpiry, j)))
			}
		}
		if kp := lib.Pending(cpu); kp != count {
			return s.mismatch(n, desc, fmt.Sprintf("cpu%d: %d timers queued in the kernel, %d in the plugin", cpu, kp, count))
		}
		st := s.w.DelTimer(cpu, j, unusedID).State
		next := fresh[ktimer.BaseLocal]
		if g := fresh[ktimer.BaseGlobal]; g != sdk.NoExpiry && (next == sdk.NoExpiry || int64(g-next) < 0) {
			next = g
		}
		switch {
		case st.LocalNext != fresh[ktimer.BaseLocal] || st.GlobalNext != fresh[ktimer.BaseGlobal] || st.NextExpiry != next:
			return s.mismatch(n, desc, fmt.Sprintf("cpu%d: plugin state next %s local %s global %s, kernel bases %s %s",
				cpu, rel(st.NextExpiry, j), rel(st.LocalNext, j), rel(st.GlobalNext, j), rel(fresh[0], j), rel(fresh[1], j)))
		case st.Pending != count:
			return s.mismatch(n, desc, fmt.Sprintf("cpu%d: plugin state Pending %d, its bases hold %d", cpu, st.Pending, count))
		}
	}
	return nil
}

var baseNames = [ktimer.NrBases]string{"BASE_LOCAL", "BASE_GLOBAL", "BASE_DEF"}

// diffExpiries compares the callbacks of one run: the same timers in the
// same order, each collected at the same jiffy (compared until the first
// re-arm, after which the kernel's base clock no longer shows it) and
// re-armed alike.
func diffExpiries(k []ktimer.Expiry, g []sdk.WheelExpiry) string {
	rearmed := false
	for i := 0; i < len(k) || i < len(g); i++ {
		switch {
		case i >= len(k):
			return fmt.Sprintf("expiry %d: the plugin ran timer %d (jiffy %d), the kernel nothing more; kernel ran %v, plugin %v", i, g[i].ID, g[i].Jiffy, kIDs(k), gIDs(g))
		case i >= len(g):
			return fmt.Sprintf("expiry %d: the kernel ran timer %d (clk %d), the plugin nothing more; kernel ran %v, plugin %v", i, k[i].ID, k[i].Clk, kIDs(k), gIDs(g))
		case uint64(k[i].ID) != uint64(g[i].ID):
			return fmt.Sprintf("expiry %d: kernel ran timer %d, plugin timer %d; kernel ran %v, plugin %v", i, k[i].ID, g[i].ID, kIDs(k), gIDs(g))
		case !rearmed && k[i].Clk != g[i].Jiffy:
			return fmt.Sprintf("expiry %d (timer %d): collected at jiffy %d in the kernel, %d in the plugin", i, k[i].ID, k[i].Clk, g[i].Jiffy)
		case k[i].Rearmed != g[i].Rearmed || k[i].NewExpires != g[i].NewExpires:
			return fmt.Sprintf("expiry %d (timer %d): re-armed to %d (%v) in the kernel, %d (%v) in the plugin", i, k[i].ID, k[i].NewExpires, k[i].Rearmed, g[i].NewExpires, g[i].Rearmed)
		}
		rearmed = rearmed || k[i].Rearmed
	}
	return ""
}

func kIDs(k []ktimer.Expiry) []uint32 {
	out := make([]uint32, len(k))
	for i, e := range k {
		out[i] = e.ID
	}
	return out
}

func gIDs(g []sdk.WheelExpiry) []sdk.TimerID {
	out := make([]sdk.TimerID, len(g))
	for i, e := range g {
		out[i] = e.ID
	}
	return out
}

// rel prints a jiffy value relative to jiffies j.
func rel(v, j uint64) string {
	if v == sdk.NoExpiry {
		return "none"
	}
	return fmt.Sprintf("j%+d", int64(v-j))
}

func sdkFlags(f ktimer.Flags) sdk.TimerFlags {
	var out sdk.TimerFlags
	if f&ktimer.Pinned != 0 {
		out |= sdk.TimerPinned
	}
	if f&ktimer.Deferrable != 0 {
		out |= sdk.TimerDeferrable
	}
	// TIMER_IRQSAFE only changes how the kernel drops the base lock around
	// the callback; the SDK has no such flag.
	return out
}

func flagNames(f ktimer.Flags) string {
	var s []string
	if f&ktimer.Pinned != 0 {
		s = append(s, "pinned")
	}
	if f&ktimer.Deferrable != 0 {
		s = append(s, "deferrable")
	}
	if f&ktimer.IRQSafe != 0 {
		s = append(s, "irqsafe")
	}
	if len(s) == 0 {
		return "global"
	}
	return strings.Join(s, ",")
}

var traceOps = os.Getenv("WHEELDIFF_TRACE") != ""

// forwarded is __forward_timer_base(): the clock a base with clk and
// next_expiry has once forwarded to jiffies j.
func forwarded(clk, next, j uint64) uint64 {
	switch {
	case int64(j-clk) <= 0:
		return clk
	case int64(next-j) > 0:
		return j
	case int64(next-clk) < 0:
		return clk
	}
	return next
}
