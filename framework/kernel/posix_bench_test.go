package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
)

// BenchmarkStressNgTimerPattern runs 20 simulated ms of the stress-ng
// --timer pattern (1 us periodic timer re-armed in the handler, nanosleep
// main loop) without a trace, per era. Metrics: simulated posix_timer_fn
// expiries and handler runs per wall second.
func BenchmarkStressNgTimerPattern(b *testing.B) {
	for _, era := range eras {
		b.Run(era, func(b *testing.B) {
			var expiries, handlers int64
			for b.Loop() {
				r := newRigTrace(b, era, 1, false)
				var log []handled
				id := -1
				l := &loop{
					setup: append([]step{do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: stressHandler(&log, 200, 1*us)})},
						append(createTimer(&id, sdk.ClockRealtime),
							func(kernel.Result) kernel.Action { return kernel.TimerSettime{ID: id, Value: 1 * us, Interval: 1 * us} })...),
					body: []step{do(kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 10 * ms})},
				}
				r.spawn("stress-ng-timer", "stress-ng-timer", 0, kernel.SchedOther, 0, l)
				r.run(20 * ms)
				expiries += r.total("posix_timer_fires")
				handlers += int64(len(log))
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(expiries)/s, "expiries/wall-s")
			b.ReportMetric(float64(handlers)/s, "handlers/wall-s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
