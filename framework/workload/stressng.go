package workload

import (
	"fmt"
	"math"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
)

// bogo counts stress-ng bogo ops after warmup.
type bogo struct {
	warmup ktime.Time
	ops    int64
	total  int64
}

func (b *bogo) inc(now ktime.Time) {
	b.total++
	if now >= b.warmup {
		b.ops++
	}
}

// stressMetrics prints the stress-ng --metrics line and bench metrics: bogo
// ops/s (real time) = ops / the measured time (stress-ng divides by the mean
// wall time of the instances, here all equal).
func stressMetrics(rep *Report, stressor string, instances int, ops int64, elapsed int64, bench string) {
	secs := float64(elapsed) / float64(ktime.Second)
	rate := perSecond(ops, elapsed)
	rep.Text = append(rep.Text,
		"stress-ng: info:  [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s",
		"stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)",
		fmt.Sprintf("stress-ng: metrc: [1] %-13s %9d %9.2f %9.2f %9.2f %12.2f %14.2f", stressor, ops, secs, 0.0, secs*float64(instances), rate, rate/float64(max(instances, 1))))
	rep.Bench = append(rep.Bench, BenchLine{Name: bench, Metrics: []Metric{
		{"bogo-ops/s", rate, "higher"},
		{"bogo-ops", float64(ops), "higher"},
	}})
}

// stressNgTimer is stress-ng --timer (stress-timer.c): per instance one
// CLOCK_REALTIME POSIX timer signalling SIGRTMIN at freq Hz; the handler counts
// a bogo op, calls sigpending() and timer_getoverrun(), and (up to V0.19.03)
// re-arms with timer_settime(); the main loop sleeps in nanosleep(10 ms).
type stressNgTimer struct {
	name      string
	instances int
	cpus      []int
	period    int64
	rearm     bool
	sleep     int64
	handler   int64
	b         bogo
	warmup    ktime.Time
}

func init() {
	register(Type{
		Name: "stress_ng_timer",
		Doc:  "stress-ng --timer: a POSIX timer at --timer-freq per instance, handler re-arms (<= V0.19.03) or not",
		Schema: sdk.Schema{Attributes: []sdk.Attribute{
			attr("instances", sdk.TypeNumber, "1", "instances (--timer N), one process each"),
			attr("cpus", sdk.TypeString, "", "cpulist the instances are pinned to, round robin; empty: instance i on CPU i"),
			attr("freq", sdk.TypeFrequency, "1MHz", "timer frequency (--timer-freq; default 1 MHz)"),
			attr("rearm_in_handler", sdk.TypeBool, "true", "the handler re-arms with timer_settime() (stress-ng <= V0.19.03; removed by 048b4cb1)"),
			attr("sleep", sdk.TypeDuration, "10ms", "main loop nanosleep"),
			attr("handler_work", sdk.TypeDuration, "200ns", "user work in the handler besides its syscalls"),
		}},
		New: func(name string, c sdk.Config, m kernel.Machine) (Workload, error) {
			w := &stressNgTimer{name: name, instances: int(c.Int("instances")), rearm: c.Bool("rearm_in_handler"),
				sleep: c.Duration("sleep"), handler: c.Duration("handler_work")}
			f := c.Float("freq")
			if f <= 0 || f > 1e9 {
				return nil, fmt.Errorf("freq must be in (0, 1GHz]")
			}
			w.period = max(int64(math.Round(1e9/f)), 1)
			cpus, err := instanceCPUs(c.String("cpus"), w.instances, m.CPUs)
			w.cpus = cpus
			return w, err
		},
	})
}

func instanceCPUs(list string, n, ncpu int) ([]int, error) {
	if n < 1 {
		return nil, fmt.Errorf("instances must be at least 1")
	}
	if list == "" {
		out := make([]int, n)
		for i := range out {
			out[i] = i % ncpu
		}
		return out, nil
	}
	cpus, err := ParseCPUList(list, ncpu)
	if err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i := range out {
		out[i] = cpus[i%len(cpus)]
	}
	return out, nil
}

func (w *stressNgTimer) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.b.warmup, w.warmup = warmup, warmup
	for i := 0; i < w.instances; i++ {
		p := k.NewProcess("stress-ng-timer")
		var tid int
		handler := func(t *kernel.Task, info kernel.SigInfo) kernel.Program {
			step := 0
			return kernel.ProgramFunc(func(t *kernel.Task, r kernel.Result) kernel.Action {
				step++
				switch step {
				case 1:
					return kernel.Sigpending{}
				case 2:
					w.b.inc(r.Now)
					return kernel.Compute{NS: w.handler}
				case 3:
					return kernel.TimerGetoverrun{ID: tid}
				case 4:
					if w.rearm {
						return kernel.TimerSettime{ID: tid, Value: w.period, Interval: w.period}
					}
					return kernel.Return{}
				default:
					return kernel.Return{}
				}
			})
		}
		prog := sequence([]step{
			do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: handler}),
			do(kernel.TimerCreate{Clock: sdk.ClockRealtime, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN}),
			func(r kernel.Result) kernel.Action {
				tid = int(r.Ret)
				return kernel.TimerSettime{ID: tid, Value: w.period, Interval: w.period}
			},
		}, []step{do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: w.sleep})})
		if _, err := k.Spawn(p, "stress-ng-timer", w.cpus[i], kernel.SchedOther, 0, prog); err != nil {
			return err
		}
	}
	return nil
}

func (w *stressNgTimer) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "stress_ng_timer", Name: w.name}
	stressMetrics(&rep, "timer", w.instances, w.b.ops, int64(end-w.warmup), "StressNgTimer")
	return rep
}
