package workload

import (
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// stressNgCPU is stress-ng --cpu: a SCHED_OTHER task per instance that only
// computes (one bogo op per op_time of user work, no syscalls), the usual
// background load against which latency and throughput are measured.
type stressNgCPU struct {
	name      string
	instances int
	cpus      []int
	op        int64
	b         bogo
	warmup    ktime.Time
}

// stressNgCPUType is the stress_ng_cpu workload type (listed in workload.go).
var stressNgCPUType = Type{
	Name: "stress_ng_cpu",
	Doc:  "stress-ng --cpu: busy SCHED_OTHER tasks, pure user computation",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("instances", "1", "1", maxTasks, "instances, one task each"),
		attr("cpus", sdk.TypeString, "", "cpulist the instances are pinned to, round robin"),
		attr("op_time", sdk.TypeDuration, "10us", "user computation per bogo op"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &stressNgCPU{name: name, instances: int(c.Int("instances")), op: c.Duration("op_time")}
		if w.op <= 0 {
			return nil, fieldErr("op_time", "must be positive")
		}
		cpus, err := instanceCPUs(c, w.instances, m.CPUs)
		w.cpus = cpus
		return w, err
	},
}

func (w *stressNgCPU) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.b.warmup, w.warmup = warmup, warmup
	for i := 0; i < w.instances; i++ {
		p := k.NewProcess("stress-ng-cpu")
		prog := sequence(nil, []step{func(r kernel.Result) kernel.Action {
			if r.Now > 0 {
				w.b.inc(r.Now)
			}
			return kernel.Compute{NS: w.op}
		}})
		if _, err := k.Spawn(p, "stress-ng-cpu", w.cpus[i], kernel.SchedOther, 0, prog); err != nil {
			return err
		}
	}
	return nil
}

func (w *stressNgCPU) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "stress_ng_cpu", Name: w.name}
	stressMetrics(&rep, "cpu", w.instances, w.b.ops, int64(end-w.warmup), "StressNgCPU")
	return rep
}
