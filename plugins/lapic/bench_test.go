package lapic

import (
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// BenchmarkProgramAck measures one clockevents programming plus the
// interrupt's Ack on a TSC-deadline LAPIC: the per-expiry device work of the
// engine's hot path.
func BenchmarkProgramAck(b *testing.B) {
	p := New().(*Plugin)
	c := sdk.Config{"mode": ModeDeadline, "tsc_freq": "3e9", "bus_freq": "1e8", "divide": "16", "arat": "true",
		"deadline_write_cost": "60", "oneshot_write_cost": "100", "eoi_cost": "50", "irq_latency": "50", "irq_latency_spread": "", "past_deadline_latency": "", "past_deadline_latency_spread": "", "eoi_cost_spread": ""}
	if d := p.Configure(sdk.Setup{CPUs: 4, HZ: 1000, Role: "local"}, c); d.HasErrors() {
		b.Fatal(d)
	}
	d, err := clockevents.New(p, clockevents.Options{HZ: 1000})
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
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/wall-s")
}
