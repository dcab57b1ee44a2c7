package workload

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// ncm models pktgen transmitting through the USB NCM gadget
// (drivers/usb/gadget/function/f_ncm.c, before mid-2021): for every packet the
// driver wraps it into the current NTB and calls
// hrtimer_start(&ncm->task_timer, TX_TIMEOUT_NSECS (300 us), HRTIMER_MODE_REL_SOFT)
// on the same timer; the soft callback (ncm_tx_timeout) flushes the NTB when no
// packet came for 300 us. pktgen sends back to back, so throughput is set by
// the per-packet cost, which includes the clockevent writes the restart makes.
type ncm struct {
	name    string
	cpu     int
	work    int64
	timeout int64
	size    int64
	cbCost  int64
	packets int64
	writes0 int64
	warmup  ktime.Time
	timer   *kernel.HRTimer
	flushes int64
}

// ncmType is the ncm workload type (listed in workload.go).
var ncmType = Type{
	Name: "ncm",
	Doc:  "pktgen over the USB NCM gadget: hrtimer_start(REL_SOFT, 300us) of one timer per packet",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("cpu", "0", "0", maxCPU, "CPU of the pktgen kthread"),
		attr("packet_work", sdk.TypeDuration, "2us", "driver and stack work per packet besides the timer restart"),
		attr("timeout", sdk.TypeDuration, "300us", "TX_TIMEOUT_NSECS"),
		count("packet_size", "1514", "1", "65535", "frame size in bytes (for Gbps)"),
		attr("callback_cost", sdk.TypeDuration, "2us", "ncm_tx_timeout() flush cost"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &ncm{name: name, cpu: int(c.Int("cpu")), work: c.Duration("packet_work"), timeout: c.Duration("timeout"),
			size: c.Int("packet_size"), cbCost: c.Duration("callback_cost")}
		if w.cpu < 0 || w.cpu >= m.CPUs {
			return nil, fieldErr("cpu", "CPU %d does not exist", w.cpu)
		}
		if w.work <= 0 || w.timeout <= 0 || w.size <= 0 {
			return nil, fieldErr("packet_work", "packet_work, timeout and packet_size must be positive")
		}
		return w, nil
	},
}

func (w *ncm) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.warmup = warmup
	w.timer = k.NewHRTimer("ncm_tx_timeout", sdk.ClockMonotonic, sdk.HRModeRel|sdk.HRModeSoft, w.cbCost,
		func(c *kernel.CPU, now ktime.Time, e *sdk.HRExpiry) { w.flushes++ })
	p := k.NewProcess("kpktgend_0")
	measuring := false
	send := kernel.KernelWork{Name: "ncm_xmit", Fn: func(c *kernel.CPU, now ktime.Time) int64 {
		if now >= w.warmup {
			if !measuring {
				measuring = true
				w.writes0 = k.Counters.Get("device_writes", w.cpu)
			}
			w.packets++
		}
		return w.work + k.StartHRTimer(c.ID(), now, w.timer, ktime.Time(w.timeout), 0, sdk.HRModeRel|sdk.HRModeSoft)
	}}
	_, err := k.Spawn(p, "kpktgend_0", w.cpu, kernel.SchedOther, 0, sequence(nil, []step{do(send)}))
	return err
}

func (w *ncm) Report(k *kernel.Kernel, end ktime.Time) Report {
	elapsed := int64(end - w.warmup)
	pps := perSecond(w.packets, elapsed)
	writes := k.Counters.Get("device_writes", w.cpu) - w.writes0
	perPkt := 0.0
	if w.packets > 0 {
		perPkt = float64(writes) / float64(w.packets)
	}
	gbps := pps * float64(w.size) * 8 / 1e9
	rep := Report{Type: "ncm", Name: w.name}
	rep.Text = append(rep.Text, fmt.Sprintf("ncm %s: %d packets, %.0f pps, %.2f Gbps (%d-byte frames), %.2f device writes/packet, %d timeout flushes",
		w.name, w.packets, pps, gbps, w.size, perPkt, w.flushes))
	rep.Bench = append(rep.Bench, BenchLine{Name: "Ncm", Metrics: []Metric{
		{"packets/s", pps, "higher"},
		{"Gbps", gbps, "higher"},
		{"device-writes/packet", perPkt, "lower"},
	}})
	return rep
}

// clockJump sets CLOCK_REALTIME at a given time by a given amount
// (clock_settime() from a SCHED_FIFO task), and reports the hrtimer interrupts
// the machine took from the jump to the end of the run.
type clockJump struct {
	name   string
	at     int64
	delta  int64
	cpu    int
	irqs0  int64
	jumped bool
}

// jumpDirections are clock_jump's direction values.
var jumpDirections = []string{"forward", "backward"}

// clockJumpType is the clock_jump workload type (listed in workload.go).
var clockJumpType = Type{
	Name: "clock_jump",
	Doc:  "clock_settime(CLOCK_REALTIME) at a time by an amount; counts hrtimer interrupts afterwards",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		attr("at", sdk.TypeDuration, "1ms", "when (CLOCK_MONOTONIC since boot)"),
		attr("delta", sdk.TypeDuration, "1s", "how far"),
		attr("direction", sdk.TypeString, "forward", "forward or backward", jumpDirections...),
		count("cpu", "0", "0", maxCPU, "CPU of the task that sets the clock"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &clockJump{name: name, at: c.Duration("at"), delta: c.Duration("delta"), cpu: int(c.Int("cpu"))}
		if jumpDirections[c.Enum("direction", jumpDirections)] == "backward" {
			w.delta = -w.delta
		}
		if w.cpu < 0 || w.cpu >= m.CPUs {
			return nil, fieldErr("cpu", "CPU %d does not exist", w.cpu)
		}
		return w, nil
	},
}

func (w *clockJump) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	p := k.NewProcess("clock_jump")
	_, err := k.Spawn(p, "date", w.cpu, kernel.SchedFIFO, 50, sequence([]step{
		do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, Abs: true, T: w.at}),
		func(r kernel.Result) kernel.Action {
			w.jumped = true
			w.irqs0 = k.Counters.Total("hrtimer_interrupts")
			return kernel.ClockSettime{Clock: sdk.ClockRealtime, T: int64(r.Now) + k.RealtimeOffset() + w.delta}
		},
	}, []step{do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 1000 * ktime.Second})}))
	return err
}

func (w *clockJump) Report(k *kernel.Kernel, end ktime.Time) Report {
	irqs := int64(0)
	if w.jumped {
		irqs = k.Counters.Total("hrtimer_interrupts") - w.irqs0
	}
	rep := Report{Type: "clock_jump", Name: w.name}
	rep.Text = append(rep.Text, fmt.Sprintf("clock_jump %s: CLOCK_REALTIME moved by %s at %s; %d hrtimer interrupts afterwards",
		w.name, signedDuration(w.delta), ktime.FormatDuration(w.at), irqs))
	rep.Bench = append(rep.Bench, BenchLine{Name: "ClockJump", Metrics: []Metric{
		{"hrtimer-interrupts", float64(irqs), "lower"},
	}})
	return rep
}

func signedDuration(d int64) string {
	if d < 0 {
		return "-" + ktime.FormatDuration(-d)
	}
	return "+" + ktime.FormatDuration(d)
}
