package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/hrtimer"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// smallKernel boots a one-CPU high-res NO_HZ-idle machine at hz with the
// builtin wheel, hrtimer and lapic plugins and the given settings.
func smallKernel(t *testing.T, hz int, settings kernel.KernelSettings) *kernel.Kernel {
	t.Helper()
	return bootKernel(t, kernel.Machine{CPUs: 1, HZ: hz, NoHZ: "idle", HighRes: true}, settings)
}

// bootKernel boots machine m (high-res) with the builtin wheel, hrtimer
// and lapic plugins and the given settings.
func bootKernel(t *testing.T, m kernel.Machine, settings kernel.KernelSettings) *kernel.Kernel {
	t.Helper()
	hz := m.HZ
	setup := sdk.Setup{CPUs: m.CPUs, HZ: hz, HighRes: true, Seed: 1}
	wb := configure(t, wheel.New(), setup).(sdk.TimerBase)
	hb := configure(t, hrtimer.New(), setup).(sdk.HRTimerBase)
	setup.Role = "local"
	dev := configure(t, lapic.New(), setup).(sdk.ClockEventDevice)
	local, err := clockevents.New(dev, clockevents.Options{HZ: hz})
	if err != nil {
		t.Fatalf("clockevents.New: %v", err)
	}
	k, err := kernel.New(kernel.Options{
		Machine:  m,
		Settings: settings,
		Plugins:  kernel.Plugins{Wheel: wb, HRTimer: hb, Local: local},
		Seed:     1,
	})
	if err != nil {
		t.Fatalf("kernel.New: %v", err)
	}
	k.Boot()
	return k
}

// acctRun runs, on one CPU at HZ=250 with NO_HZ idle, a task that loops
// over 370 us of user computation, a 150 us syscall and a 230 us sleep
// for 1 s, under the given accounting, and returns the CPU's exact times
// and /proc/stat line.
func acctRun(t *testing.T, mode string, irqtime bool) (kernel.ExactTimes, kernel.ProcStat) {
	t.Helper()
	k := smallKernel(t, 250, kernel.KernelSettings{PosixTimerSignals: "consistent", Costs: rigCosts, CputimeAccounting: mode, IRQTimeAccounting: irqtime})
	n := 0
	prog := kernel.ProgramFunc(func(_ *kernel.Task, _ kernel.Result) kernel.Action {
		n++
		switch n % 3 {
		case 1:
			return kernel.Compute{NS: 370_000}
		case 2:
			return kernel.Syscall{Name: "getppid", Cost: 150_000}
		}
		return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 230_000}
	})
	if _, err := k.Spawn(k.NewProcess("loop"), "loop", 0, kernel.SchedOther, 0, prog); err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	k.Start(0)
	if err := k.Run(ktime.Time(ktime.Second)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return k.ExactTimes()[0], k.ProcStats()[0]
}

// TestCPUTimeUserWork: a task's user computation is user time, exactly and
// as the ticks sample it, its syscalls system time; interrupts show in
// /proc/stat only under irq time accounting; idle is the exact idle time
// (NO_HZ: ts->idle_sleeptime). The same run twice gives the same figures.
func TestCPUTimeUserWork(t *testing.T) {
	for _, irqtime := range []bool{false, true} {
		ex, st := acctRun(t, kernel.CputimeTick, irqtime)
		total := ex.User + ex.System + ex.Idle + ex.IRQ + ex.Softirq
		if total != int64(ktime.Second) {
			t.Errorf("irqtime=%v: exact times sum to %d ns, want the run's 1 s", irqtime, total)
		}
		// 370 us of ~770 us per loop is user: about 48% of the run.
		if share := float64(ex.User) / float64(total); share < 0.40 || share > 0.55 {
			t.Errorf("irqtime=%v: exact user share %.3f, want about 0.48", irqtime, share)
		}
		if ex.System <= 0 || ex.IRQ <= 0 {
			t.Errorf("irqtime=%v: exact system %d, irq %d ns: want both > 0", irqtime, ex.System, ex.IRQ)
		}
		// 250 ticks sample the loop: user and system get whole ticks.
		tick := int64(ktime.Second / 250)
		if st.User < 50*tick/2 || st.System <= 0 {
			t.Errorf("irqtime=%v: /proc/stat user %d, system %d ns: want user at least 25 ticks' worth and system > 0", irqtime, st.User, st.System)
		}
		if !irqtime && (st.User%tick != 0 || st.System%tick != 0 || st.IRQ != 0) {
			t.Errorf("tick sampling: user %d, system %d, irq %d ns: want whole ticks and no irq time", st.User, st.System, st.IRQ)
		}
		if irqtime && st.IRQ != ex.IRQ {
			t.Errorf("irq time accounting: irq %d ns, want the measured %d", st.IRQ, ex.IRQ)
		}
		if st.Idle != ex.Idle {
			t.Errorf("irqtime=%v: idle %d ns, want ts->idle_sleeptime, the exact %d", irqtime, st.Idle, ex.Idle)
		}
		ex2, st2 := acctRun(t, kernel.CputimeTick, irqtime)
		if ex2 != ex || st2 != st {
			t.Errorf("irqtime=%v: a second run gives %+v %+v, the first %+v %+v", irqtime, ex2, st2, ex, st)
		}
	}
}

// TestSignalWakeupIsIRQTime: a POSIX timer's signal that wakes its task
// from a sleep does the try_to_wake_up() in the timer interrupt
// (posix_timer_fn() -> send_sigqueue() -> signal_wake_up()), so the
// interrupt lasts that much longer: raising the wakeup cost by d raises the
// exact irq time by d per woken sleep, here 5 (the sleeper's own hrtimer,
// whose callback cost includes a wakeup, never expires: the signal ends
// every sleep first).
func TestSignalWakeupIsIRQTime(t *testing.T) {
	irq := func(wakeup int64) int64 {
		costs := rigCosts
		costs.Wakeup = wakeup
		k := smallKernel(t, 250, kernel.KernelSettings{PosixTimerSignals: "consistent", Costs: costs})
		n, sleeps := 0, 0
		handler := func(*kernel.Task, kernel.SigInfo) kernel.Program {
			return kernel.ProgramFunc(func(*kernel.Task, kernel.Result) kernel.Action { return kernel.Return{} })
		}
		prog := kernel.ProgramFunc(func(_ *kernel.Task, r kernel.Result) kernel.Action {
			n++
			switch {
			case n == 1:
				return kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: handler}
			case n == 2:
				return kernel.TimerCreate{Clock: sdk.ClockMonotonic, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN}
			case n%2 == 1 && sleeps < 5:
				return kernel.TimerSettime{ID: 0, Value: 100 * us}
			case n%2 == 0 && sleeps < 5:
				sleeps++
				return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 1 * ms}
			}
			return kernel.Exit{}
		})
		if _, err := k.Spawn(k.NewProcess("p"), "p", 0, kernel.SchedOther, 0, prog); err != nil {
			t.Fatalf("Spawn: %v", err)
		}
		k.Start(0)
		if err := k.Run(ktime.Time(20 * ms)); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := k.Counters.Total("signals_delivered"); got != 5 {
			t.Fatalf("wakeup cost %d: %d signals delivered, want 5", wakeup, got)
		}
		return k.ExactTimes()[0].IRQ
	}
	const d = 2700
	if got := irq(300+d) - irq(300); got != 5*d {
		t.Errorf("irq time grows by %d ns with the wakeup cost raised by %d, want %d (5 signal wakeups in the interrupt)", got, d, 5*d)
	}
}

// busyLoop is a task that alternates 370 us of user computation with a
// 150 us syscall, never sleeping.
func busyLoop() kernel.Program {
	n := 0
	return kernel.ProgramFunc(func(_ *kernel.Task, _ kernel.Result) kernel.Action {
		n++
		if n%2 == 1 {
			return kernel.Compute{NS: 370_000}
		}
		return kernel.Syscall{Name: "getppid", Cost: 150_000}
	})
}

// TestCPUTimeVtimeNohzFull: NO_HZ_FULL selects VIRT_CPU_ACCOUNTING_GEN,
// so a nohz_full CPU measures its time at transitions whatever
// cputime_accounting says (with tick sampling its stopped tick would
// charge a task running alone almost nothing): user and system are the
// exact times, interrupt time counted as system without irq time
// accounting. The housekeeping CPU, outside nohz_full=, still samples
// ticks (vtime_accounting_enabled_this_cpu()).
func TestCPUTimeVtimeNohzFull(t *testing.T) {
	tick := int64(ktime.Second / 250)
	for _, mode := range []string{kernel.CputimeTick, kernel.CputimeVtime} {
		k := bootKernel(t, kernel.Machine{CPUs: 2, HZ: 250, NoHZ: "full", NoHZFull: []int{1}, HighRes: true},
			kernel.KernelSettings{PosixTimerSignals: "consistent", NohzFullTick: kernel.NohzFullOffload, Costs: rigCosts, CputimeAccounting: mode})
		for cpu := 0; cpu < 2; cpu++ {
			if _, err := k.Spawn(k.NewProcess("busy"), "busy", cpu, kernel.SchedOther, 0, busyLoop()); err != nil {
				t.Fatalf("Spawn: %v", err)
			}
		}
		k.Start(0)
		if err := k.Run(ktime.Time(ktime.Second)); err != nil {
			t.Fatalf("Run: %v", err)
		}
		ex, st := k.ExactTimes(), k.ProcStats()
		if m, _ := k.CPUTimeAccounting(); m != kernel.CputimeVtime {
			t.Errorf("%s: the kernel reports %s accounting, want vtime (nohz_full CPUs)", mode, m)
		}
		if ex[1].User < int64(ktime.Second)/2 {
			t.Errorf("%s: exact user time on CPU 1 is %d ns, want most of the second", mode, ex[1].User)
		}
		if st[1].User != ex[1].User || st[1].System != ex[1].System+ex[1].IRQ+ex[1].Softirq {
			t.Errorf("%s: CPU 1 /proc/stat user %d system %d, want the exact user %d and system+irq+softirq %d",
				mode, st[1].User, st[1].System, ex[1].User, ex[1].System+ex[1].IRQ+ex[1].Softirq)
		}
		if st[0].User%tick != 0 || st[0].System%tick != 0 || st[0].User == 0 {
			t.Errorf("%s: housekeeping CPU 0 user %d system %d ns, want whole ticks (it samples them)", mode, st[0].User, st[0].System)
		}
	}
}

// TestCPUTimeIdleWithoutNOHZ: with NO_HZ off (nohz=off) get_idle_time()
// has no ts->idle_sleeptime to read and /proc/stat's idle is the ticks that
// landed in idle, whole ticks like every other field; the fields then sum
// to the ticks' time.
func TestCPUTimeIdleWithoutNOHZ(t *testing.T) {
	const hz = 250
	k := bootKernel(t, kernel.Machine{CPUs: 1, HZ: hz, NoHZ: "off", HighRes: true},
		kernel.KernelSettings{PosixTimerSignals: "consistent", Costs: rigCosts, CputimeAccounting: kernel.CputimeTick})
	n := 0
	prog := kernel.ProgramFunc(func(_ *kernel.Task, _ kernel.Result) kernel.Action {
		n++
		if n%2 == 1 {
			return kernel.Compute{NS: 1_300_000}
		}
		return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 2_100_000}
	})
	if _, err := k.Spawn(k.NewProcess("p"), "p", 0, kernel.SchedOther, 0, prog); err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	k.Start(0)
	if err := k.Run(ktime.Time(ktime.Second)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	st, ex := k.ProcStats()[0], k.ExactTimes()[0]
	tick := int64(ktime.Second / hz)
	if st.Idle == 0 || st.Idle%tick != 0 || st.Idle == ex.Idle {
		t.Errorf("idle %d ns (exact %d): want whole ticks, not the exact time", st.Idle, ex.Idle)
	}
	if total := st.Total(); total%tick != 0 || total > int64(ktime.Second) || total < int64(ktime.Second)-2*tick {
		t.Errorf("fields sum to %d ns, want the second's ticks, %d each", total, tick)
	}
}
