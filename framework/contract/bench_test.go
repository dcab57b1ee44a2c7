package contract_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/contract"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/plugins/lapic"
	"github.com/tickemu/tickemu/plugins/wheel"
)

// BenchmarkChecked measures what the checker adds to the in-process hot
// paths: each pair of sub-benchmarks runs the same work on the bare builtin
// and on it wrapped by contract.Wrap, side by side in one run.
func BenchmarkChecked(b *testing.B) {
	limits := contract.Limits{CPUs: 4}
	for _, checked := range []bool{false, true} {
		name := map[bool]string{false: "bare", true: "checked"}[checked]
		b.Run("ProgramAck/"+name, func(b *testing.B) {
			var p sdk.Plugin = lapic.New()
			c := defaults(b, p, sdk.Config{"mode": lapic.ModeDeadline, "tsc_freq": "3e9", "bus_freq": "1e8", "divide": "16", "arat": "true",
				"deadline_write_cost": "60", "oneshot_write_cost": "100", "eoi_cost": "50", "irq_latency": "50"})
			if checked {
				p = contract.Wrap(sdk.KindClockEvent, "lapic", p, limits)
			}
			if d := p.Configure(sdk.Setup{CPUs: 4, HZ: 1000, Role: "local"}, c); d.HasErrors() {
				b.Fatal(d)
			}
			d, err := clockevents.New(p.(sdk.ClockEventDevice), clockevents.Options{HZ: 1000})
			if err != nil {
				b.Fatal(err)
			}
			d.SetState(0, 0, sdk.StateOneshot, 0)
			now := ktime.Time(ktime.Millisecond)
			b.ReportAllocs()
			for b.Loop() {
				r := d.Program(0, now, now.Add(37*ktime.Microsecond), true)
				a := d.Ack(0, r.FireAt)
				now = r.FireAt.Add(a.Cost)
			}
		})
		b.Run("ModTimerRunTimers/"+name, func(b *testing.B) {
			var p sdk.Plugin = wheel.New()
			if checked {
				p = contract.Wrap(sdk.KindTimerBase, "wheel", p, limits)
			}
			if d := p.Configure(sdk.Setup{CPUs: 4, HZ: 1000}, defaults(b, p, sdk.Config{"layout": "levels", "catchup": "next_expiry"})); d.HasErrors() {
				b.Fatal(d)
			}
			w := p.(sdk.TimerBase)
			const timers = 4096
			j := uint64(1 << 32)
			x := uint64(1)
			for id := sdk.TimerID(1); id <= timers; id++ {
				x = x*6364136223846793005 + 1442695040888963407
				w.ModTimer(0, j, sdk.WheelTimer{ID: id, Expires: j + 1 + (x>>33)%5000})
			}
			id := sdk.TimerID(0)
			b.ReportAllocs()
			for b.Loop() {
				x = x*6364136223846793005 + 1442695040888963407
				id = id%timers + 1
				w.ModTimer(0, j, sdk.WheelTimer{ID: id, Expires: j + 1 + (x>>33)%5000})
				j++
				w.RunTimers(0, j)
			}
		})
	}
}
