package workload

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// kernelTimers models background per-CPU wheel timers of a kernel (vmstat,
// watchdog, writeback, ...): one timer_list per listed CPU with a period and
// the deferrable flag, re-armed by its callback with mod_timer(jiffies + period).
type kernelTimers struct {
	name       string
	function   string
	cpus       []int
	period     int64
	deferrable bool
	cost       int64
	phase      int64
	jitter     int64
	pinned     bool
	timers     []*kernel.WheelTimer
}

// kernelTimersType is the kernel_timers workload type (listed in workload.go).
var kernelTimersType = Type{
	Name: "kernel_timers",
	Doc:  "background per-CPU timer_list timers (vmstat, watchdog, writeback...) re-armed every period",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		attr("function", sdk.TypeString, "", "callback name shown in traces (defaults to the block name)"),
		attr("cpus", sdk.TypeString, "all", "cpulist"),
		attr("period", sdk.TypeDuration, "1s", "re-arm period (rounded to jiffies)"),
		attr("deferrable", sdk.TypeBool, "false", "TIMER_DEFERRABLE: never wakes an idle CPU"),
		attr("callback_cost", sdk.TypeDuration, "500ns", "callback run time"),
		attr("phase", sdk.TypeDuration, "0s", "first expiry offset added to the period"),
		attr("phase_jitter", sdk.TypeDuration, "0s", "a seeded random 0..phase_jitter added to each timer's first expiry"),
		attr("pinned", sdk.TypeBool, "true", "TIMER_PINNED (the default): the timer stays on its CPU. false: a migratable timer whose "+
			"callback re-arms it with mod_timer() on the CPU that ran it, so kernel.timer_migration can move it (push) "+
			"or the timer-migration hierarchy expire it remotely (pull)"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &kernelTimers{name: name, function: c.String("function"), period: c.Duration("period"),
			deferrable: c.Bool("deferrable"), cost: c.Duration("callback_cost"), phase: c.Duration("phase"), jitter: c.Duration("phase_jitter"),
			pinned: c.Bool("pinned")}
		if w.function == "" {
			w.function = name
		}
		if w.period <= 0 {
			return nil, fieldErr("period", "must be positive")
		}
		w.cpus = c.CPUList("cpus", m.CPUs)
		return w, nil
	},
}

func (w *kernelTimers) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	pj := uint64((w.period + k.TickNsec() - 1) / k.TickNsec())
	ph := uint64(w.phase / k.TickNsec())
	var flags sdk.TimerFlags
	if w.pinned {
		flags = sdk.TimerPinned
	}
	if w.deferrable {
		flags |= sdk.TimerDeferrable
	}
	rng := k.Rand("kernel_timers/" + w.name)
	for _, cpu := range w.cpus {
		var t *kernel.WheelTimer
		if w.pinned {
			t = k.NewWheelTimer(w.function, flags, w.cost, pj, nil)
		} else {
			// mod_timer(timer, jiffies + period) from the callback, on the
			// CPU running it: __mod_timer() places it from there.
			t = k.NewWheelTimer(w.function, flags, w.cost, 0, nil)
			t.Callback = func(c *kernel.CPU, now ktime.Time) {
				k.ModTimer(c.ID(), now, t, k.Jiffies()+pj)
			}
		}
		w.timers = append(w.timers, t)
		j := uint64(0)
		if w.jitter > 0 {
			j = uint64(rng.Int63n(w.jitter) / k.TickNsec())
		}
		k.ModTimer(cpu, 0, t, k.Jiffies()+pj+ph+j)
	}
	return nil
}

func (w *kernelTimers) Report(k *kernel.Kernel, end ktime.Time) Report {
	return Report{Type: "kernel_timers", Name: w.name}
}

// hrtimerLoad is a kernel-internal hrtimer load: per listed CPU, count
// periodic hrtimers whose callbacks forward and restart them (HRTIMER_RESTART),
// like per-CPU watchdog or sched hrtick timers. It is the timer-heavy load of
// the engine benchmarks, and with period 0 a set of one-shot timers.
type hrtimerLoad struct {
	name     string
	cpus     []int
	count    int
	period   int64
	first    int64
	clock    sdk.ClockID
	soft     bool
	abs      bool
	cost     int64
	stagger  bool
	timers   []*kernel.HRTimer
	expiries int64
	warmup   ktime.Time
}

// hrtimerLoadClockNames are hrtimer_load's clock values; hrtimerLoadClocks
// the clocks they name, in the same order.
var (
	hrtimerLoadClockNames = []string{"monotonic", "realtime", "boottime", "tai"}
	hrtimerLoadClocks     = []sdk.ClockID{sdk.ClockMonotonic, sdk.ClockRealtime, sdk.ClockBoottime, sdk.ClockTAI}
)

// hrtimerLoadType is the hrtimer_load workload type (listed in workload.go).
var hrtimerLoadType = Type{
	Name: "hrtimer_load",
	Doc:  "kernel hrtimers per CPU, periodic (callback restarts them) or one-shot",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		attr("cpus", sdk.TypeString, "all", "cpulist"),
		count("count", "1", "1", maxTimersPerCPU, "timers per CPU"),
		attr("period", sdk.TypeDuration, "100us", "forward period; 0s = one-shot"),
		attr("first", sdk.TypeDuration, "0s", "first expiry (relative to boot in the timer's clock when absolute); 0 = one period"),
		attr("clock", sdk.TypeString, "monotonic", "clock base", hrtimerLoadClockNames...),
		attr("soft", sdk.TypeBool, "false", "HRTIMER_MODE_SOFT: expire in HRTIMER_SOFTIRQ"),
		attr("absolute", sdk.TypeBool, "true", "start in ABS mode at first (else REL)"),
		attr("callback_cost", sdk.TypeDuration, "200ns", "callback run time"),
		attr("stagger", sdk.TypeBool, "true", "spread the first expiries of a CPU's timers over one period"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &hrtimerLoad{name: name, count: int(c.Int("count")), period: c.Duration("period"), first: c.Duration("first"),
			soft: c.Bool("soft"), abs: c.Bool("absolute"), cost: c.Duration("callback_cost"), stagger: c.Bool("stagger")}
		w.clock = hrtimerLoadClocks[c.Enum("clock", hrtimerLoadClockNames)]
		if w.count < 1 {
			return nil, fieldErr("count", "must be at least 1")
		}
		if w.period == 0 && w.first == 0 {
			return nil, fieldErr("first", "a one-shot load (period 0s) needs first")
		}
		cpus := c.CPUList("cpus", m.CPUs)
		w.cpus = cpus
		if w.count*len(cpus) > maxTimers {
			return nil, fieldErr("count", "%d timers on each of %d CPUs make %d, more than the %d one block may start", w.count, len(cpus), w.count*len(cpus), maxTimers)
		}
		return w, nil
	},
}

func (w *hrtimerLoad) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.warmup = warmup
	mode := sdk.HRModeAbs
	if !w.abs {
		mode = sdk.HRModeRel
	}
	if w.soft {
		mode |= sdk.HRModeSoft
	} else {
		mode |= sdk.HRModeHard
	}
	first := w.first
	if first == 0 {
		first = w.period
	}
	for _, cpu := range w.cpus {
		for i := 0; i < w.count; i++ {
			t := k.NewHRTimer(w.name+"_fn", w.clock, mode, w.cost, func(c *kernel.CPU, now ktime.Time, e *sdk.HRExpiry) {
				if now >= w.warmup {
					w.expiries++
				}
			})
			t.Period = w.period
			at := first
			if w.stagger && w.count > 1 && w.period > 0 {
				at += w.period * int64(i) / int64(w.count)
			}
			k.StartHRTimer(cpu, 0, t, ktime.Time(at), 0, mode)
			w.timers = append(w.timers, t)
		}
	}
	return nil
}

func (w *hrtimerLoad) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "hrtimer_load", Name: w.name}
	rep.Text = append(rep.Text, fmt.Sprintf("hrtimer_load %s: %d expiries, %.0f/s simulated", w.name, w.expiries, perSecond(w.expiries, int64(end-w.warmup))))
	rep.Bench = append(rep.Bench, BenchLine{Name: "HrtimerLoad", Metrics: []Metric{
		{"expiries", float64(w.expiries), "higher"},
		{"expiries/s", perSecond(w.expiries, int64(end-w.warmup)), "higher"},
	}})
	return rep
}
