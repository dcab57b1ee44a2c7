package hpet

import (
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// BenchmarkProgramAck measures one forced programming of the HPET through the
// clockevents core with SMI interference on (the race path), plus the Ack.
func BenchmarkProgramAck(b *testing.B) {
	p := New().(*Plugin)
	c := sdk.Config{"freq": "14318180", "channels": "0", "read_cost": "1000", "write_cost": "100",
		"cmp_latch_cycles": "2", "ack_cost": "50", "irq_latency": "1000", "smi_rate": "1e4", "smi_duration": "10000"}
	if d := p.Configure(sdk.Setup{CPUs: 4, HZ: 1000, Seed: 1, Role: "broadcast"}, c); d.HasErrors() {
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
