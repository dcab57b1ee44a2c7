package wheel

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// BenchmarkModTimerRunTimers measures the wheel's hot path as the host drives
// it: per op, one mod_timer() of one of 4096 timers to a pseudo-random delay
// of 1-5000 jiffies, then the tick's softirq at the next jiffy. ns/op is the
// wall cost of that pair; expiries/wall-s the timers expired per wall second.
func BenchmarkModTimerRunTimers(b *testing.B) {
	const timers = 4096
	for _, c := range combos {
		b.Run(c.layout+"/"+c.catchup, func(b *testing.B) {
			w := newWheel(b, 1000, 1, "layout", c.layout, "catchup", c.catchup)
			j := uint64(1 << 32)
			x := uint64(1)
			for id := sdk.TimerID(1); id <= timers; id++ {
				x = x*6364136223846793005 + 1442695040888963407
				w.ModTimer(0, j, sdk.WheelTimer{ID: id, Expires: j + 1 + (x>>33)%5000})
			}
			var expired int
			id := sdk.TimerID(0)
			for b.Loop() {
				x = x*6364136223846793005 + 1442695040888963407
				id = id%timers + 1
				w.ModTimer(0, j, sdk.WheelTimer{ID: id, Expires: j + 1 + (x>>33)%5000})
				j++
				expired += len(w.RunTimers(0, j).Expired)
			}
			b.ReportMetric(float64(expired)/b.Elapsed().Seconds(), "expiries/wall-s")
		})
	}
}

// BenchmarkPeriodicExpiry measures expiry throughput: 2048 timers re-arm
// themselves every 1-16 jiffies (declared Period), the softirq runs every
// jiffy. ns/op is per softirq.
func BenchmarkPeriodicExpiry(b *testing.B) {
	const timers = 2048
	for _, c := range combos {
		b.Run(c.layout+"/"+c.catchup, func(b *testing.B) {
			w := newWheel(b, 1000, 1, "layout", c.layout, "catchup", c.catchup)
			j := uint64(1 << 32)
			for id := sdk.TimerID(1); id <= timers; id++ {
				p := uint64(id%16) + 1
				w.ModTimer(0, j, sdk.WheelTimer{ID: id, Expires: j + p, Period: p, CallbackCost: 500})
			}
			var expired int
			for b.Loop() {
				j++
				expired += len(w.RunTimers(0, j).Expired)
			}
			b.ReportMetric(float64(expired)/b.Elapsed().Seconds(), "expiries/wall-s")
			b.ReportMetric(float64(expired)/float64(b.N), "expiries/op")
		})
	}
}
