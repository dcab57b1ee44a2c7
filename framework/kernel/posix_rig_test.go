package kernel_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// The rig runs task programs on a small machine built from the builtin
// wheel, hrtimer and lapic plugins with their default configurations, and
// with fixed framework costs so the expectations below do not move when the
// defaults are recalibrated.

// eras are the two posix_timer_signals strategies every test runs under.
var eras = []string{"legacy", "consistent"}

// rigCosts are the framework costs of every rig run.
var rigCosts = kernel.Costs{
	IRQEntry: 200, IRQExit: 100, SoftirqEntry: 100, Tick: 500, JiffiesUpdate: 50,
	NohzStop: 300, NohzRestart: 300, Syscall: 100, ContextSwitch: 1000, Wakeup: 300,
	IPISend: 200, IPILatency: 1000, SignalGenerate: 300, SignalDeliver: 700, SignalDequeue: 100,
	ClockRead: 20, TimerSlack: 50000, TimerCallback: 500,
}

type rig struct {
	t     testing.TB
	k     *kernel.Kernel
	buf   bytes.Buffer
	tw    *trace.Writer
	procs map[string]*kernel.Process
}

// newRig builds a CPUs-CPU HZ=1000 NO_HZ-idle high-res machine in era,
// tracing every event.
func newRig(t testing.TB, era string, cpus int) *rig { return newRigTrace(t, era, cpus, true) }

// newRigTrace is newRig with the trace on or off.
func newRigTrace(t testing.TB, era string, cpus int, traced bool) *rig {
	t.Helper()
	return newRigDevice(t, era, cpus, traced, nil)
}

// newRigDevice is newRigTrace with the lapic's attributes in over.
func newRigDevice(t testing.TB, era string, cpus int, traced bool, over sdk.Config) *rig {
	t.Helper()
	r := &rig{t: t, procs: map[string]*kernel.Process{}}
	setup := sdk.Setup{CPUs: cpus, HZ: 1000, HighRes: true, Seed: 1}
	wb := configure(t, wheel.New(), setup).(sdk.TimerBase)
	hb := configure(t, hrtimer.New(), setup).(sdk.HRTimerBase)
	setup.Role = "local"
	dev := configureWith(t, lapic.New(), setup, over).(sdk.ClockEventDevice)
	local, err := clockevents.New(dev, clockevents.Options{HZ: 1000})
	if err != nil {
		t.Fatalf("clockevents.New: %v", err)
	}
	if traced {
		r.tw = trace.New(&r.buf, "", cpus)
	}
	k, err := kernel.New(kernel.Options{
		Machine:  kernel.Machine{CPUs: cpus, HZ: 1000, NoHZ: "idle", HighRes: true},
		Settings: kernel.KernelSettings{PosixTimerSignals: era, Costs: rigCosts},
		Plugins:  kernel.Plugins{Wheel: wb, HRTimer: hb, Local: local},
		Seed:     1,
		Trace:    r.tw,
	})
	if err != nil {
		t.Fatalf("kernel.New: %v", err)
	}
	r.k = k
	k.Boot()
	return r
}

// configure configures p with its schema defaults.
func configure(t testing.TB, p sdk.Plugin, s sdk.Setup) sdk.Plugin {
	t.Helper()
	return configureWith(t, p, s, nil)
}

// configureWith configures p with its schema defaults and the canonical
// values in over (kernel.ConfigureWith, shared with the timelines).
func configureWith(t testing.TB, p sdk.Plugin, s sdk.Setup, over sdk.Config) sdk.Plugin {
	t.Helper()
	return kernel.ConfigureWith(t, p, s, over)
}

// spawn starts a thread of process proc (created on first use) on cpu.
func (r *rig) spawn(proc, comm string, cpu int, pol kernel.Policy, prio int, prog kernel.Program) *kernel.Task {
	r.t.Helper()
	p := r.procs[proc]
	if p == nil {
		p = r.k.NewProcess(proc)
		r.procs[proc] = p
	}
	t, err := r.k.Spawn(p, comm, cpu, pol, prio, prog)
	if err != nil {
		r.t.Fatalf("Spawn: %v", err)
	}
	return t
}

// run simulates until the given time and closes the trace.
func (r *rig) run(until int64) {
	r.t.Helper()
	r.k.Start(0)
	if err := r.k.Run(ktime.Time(until)); err != nil {
		r.t.Fatalf("Run: %v", err)
	}
	if err := r.tw.Close(); err != nil {
		r.t.Fatalf("trace: %v", err)
	}
	if n := r.tw.Late(); n != 0 {
		r.t.Errorf("trace: %d lines arrived after later ones", n)
	}
}

func (r *rig) total(name string) int64 { return r.k.Counters.Total(name) }

// grepCount is grep -c PATTERN on the trace.
func (r *rig) grepCount(pattern string) int {
	re := regexp.MustCompile(pattern)
	n := 0
	for _, l := range strings.Split(r.buf.String(), "\n") {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// step is one action of a scripted program, given the previous result.
type step func(r kernel.Result) kernel.Action

// script runs steps once and then exits; results[i] is what step i+1 saw.
type script struct {
	steps   []step
	i       int
	results []kernel.Result
}

func (s *script) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	if s.i > 0 {
		s.results = append(s.results, r)
	}
	if s.i >= len(s.steps) {
		return kernel.Exit{}
	}
	st := s.steps[s.i]
	s.i++
	return st(r)
}

func do(a kernel.Action) step { return func(kernel.Result) kernel.Action { return a } }

// handled records one handler invocation.
type handled struct {
	pid     int
	at      ktime.Time
	info    kernel.SigInfo
	overrun int64 // timer_getoverrun() from inside the handler, -1 if not asked
}

// recorder is a handler that logs each run into log; with getoverrun it
// calls timer_getoverrun(info.TimerID); with rearm > 0 it re-arms the timer
// with timer_settime(rearm, rearm) as stress-ng <= V0.19.03 does.
func recorder(log *[]handled, getoverrun bool, rearm int64) kernel.Handler {
	return func(t *kernel.Task, info kernel.SigInfo) kernel.Program {
		h := handled{pid: t.Pid, info: info, overrun: -1}
		step := 0
		return kernel.ProgramFunc(func(t *kernel.Task, r kernel.Result) kernel.Action {
			step++
			switch step {
			case 1:
				h.at = r.Now
				if getoverrun {
					return kernel.TimerGetoverrun{ID: info.TimerID}
				}
				step++
				fallthrough
			case 2:
				if getoverrun {
					h.overrun = r.Ret
				}
				if rearm > 0 {
					return kernel.TimerSettime{ID: info.TimerID, Value: rearm, Interval: rearm}
				}
			}
			*log = append(*log, h)
			return kernel.Return{}
		})
	}
}

const (
	us = ktime.Microsecond
	ms = ktime.Millisecond
)
