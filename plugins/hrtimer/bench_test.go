package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// BenchmarkStartInterrupt measures one Start of a 1 us REL timer followed by
// the Interrupt that expires it, with `queued` other timers pending far in
// the future (so the queues have depth). One op = Start + Interrupt.
func BenchmarkStartInterrupt(b *testing.B) {
	for _, queued := range []int{0, 1000} {
		b.Run(map[int]string{0: "empty", 1000: "queued=1000"}[queued], func(b *testing.B) {
			p := configure(b, highRes(1), nil)
			for i := range queued {
				p.Start(0, 0, hard(sdk.TimerID(1000+i)), at(1000*ktime.Second+int64(i)*us), 0)
			}
			ht := sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeRel, CallbackCost: 100}
			now := at(1 * us)
			b.ReportAllocs()
			for b.Loop() {
				res := p.Start(0, now, ht, at(1*us), 0)
				ir := p.Interrupt(0, res.Expires)
				if len(ir.Expired) != 1 {
					b.Fatalf("Interrupt expired %d timers, want 1", len(ir.Expired))
				}
				now = ir.End
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "start+irq/s")
		})
	}
}

// BenchmarkPeriodicExpiries measures expiries per wall second of 64 periodic
// hard timers on one CPU, driven at each NextEvent: the in-process plugin's
// share of the engine's >= 2M expiries/s budget.
func BenchmarkPeriodicExpiries(b *testing.B) {
	p := configure(b, highRes(1), nil)
	for i := range 64 {
		ht := sdk.HRTimer{ID: sdk.TimerID(i + 1), Clock: sdk.ClockMonotonic, Period: 100*us + int64(i)*1000, CallbackCost: 200}
		p.Start(0, 0, ht, at(100*us+int64(i)*1000), 0)
	}
	expiries := 0
	b.ReportAllocs()
	for b.Loop() {
		ir := p.Interrupt(0, p.NextEvent(0, 0, 0))
		expiries += len(ir.Expired)
	}
	b.ReportMetric(float64(expiries)/b.Elapsed().Seconds(), "expiries/wall-s")
	b.ReportMetric(0, "ns/op")
}

// TestStartInterruptAllocs: Start + Interrupt is allocation-free in steady
// state. Speed is measured by BenchmarkStartInterrupt (about 0.3 s per million
// pairs on an idle core), never asserted in a test.
func TestStartInterruptAllocs(t *testing.T) {
	p := configure(t, highRes(1), nil)
	ht := sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeRel}
	now := at(1 * us)
	allocs := testing.AllocsPerRun(10000, func() {
		res := p.Start(0, now, ht, at(1*us), 0)
		now = p.Interrupt(0, res.Expires).End
	})
	if allocs != 0 {
		t.Errorf("Start+Interrupt allocates %.2f times per pair, want 0", allocs)
	}
}
