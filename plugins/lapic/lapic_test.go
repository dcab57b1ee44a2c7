package lapic

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// config returns the schema defaults in canonical form with overrides.
func config(t *testing.T, over map[string]string) sdk.Config {
	t.Helper()
	c := sdk.Config{}
	for _, a := range New().Schema().Attributes {
		v := a.Default
		switch a.Type {
		case sdk.TypeDuration:
			ns, err := ktime.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			v = strconv.FormatInt(ns, 10)
		case sdk.TypeFrequency:
			hz, err := ktime.ParseFrequency(v)
			if err != nil {
				t.Fatal(err)
			}
			v = strconv.FormatFloat(hz, 'g', -1, 64)
		}
		c[a.Name] = v
	}
	for k, v := range over {
		c[k] = v
	}
	return c
}

func configured(t *testing.T, hz int, over map[string]string) *Plugin {
	t.Helper()
	p := New().(*Plugin)
	if d := p.Configure(sdk.Setup{CPUs: 2, HZ: hz, Role: "local"}, config(t, over)); d.HasErrors() {
		t.Fatalf("Configure(%v) = %v", over, d)
	}
	return p
}

// defaults wraps the plugin so the conformance suite's schema defaults are
// others (a mode, a machine's costs).
type defaults struct {
	*Plugin
	over map[string]string
}

func (d defaults) Schema() sdk.Schema {
	s := d.Plugin.Schema()
	for i, a := range s.Attributes {
		if v, ok := d.over[a.Name]; ok {
			s.Attributes[i].Default = v
		}
	}
	return s
}

// kvmGuest is profiles/kvm-guest.hcl's lapic block (configs/default.hcl's
// device): every latency and EOI cost drawn, past deadlines injected at the
// write.
var kvmGuest = map[string]string{
	"deadline_write_cost":   "8316ns",
	"eoi_cost":              "7674ns",
	"eoi_cost_spread":       "p1=-2.34us p5=-1.34us p10=-1.2us p25=-717ns p50=-152ns p75=+658ns p90=+1.26us p95=+1.42us p99=+2.28us p99.9=+36.7us",
	"irq_latency":           "10692ns",
	"irq_latency_spread":    "p1=-7.45us p5=-6.49us p10=-5.64us p25=-4.71us p50=-343ns p75=+3.7us p90=+6.82us p95=+10.6us p99=+24.4us p99.9=+86.3us",
	"past_deadline_latency": "0ns",
}

// TestConformance runs the SDK's conformance suite in both modes, and in
// TSC-deadline mode with the KVM guest's spreads, whose declared
// DeadlineModel (spreads and stream) must give the answers the device
// gives.
func TestConformance(t *testing.T) {
	for name, over := range map[string]map[string]string{
		ModeDeadline:          {"mode": ModeDeadline},
		ModeOneshot:           {"mode": ModeOneshot},
		ModeDeadline + "/kvm": merge(kvmGuest, map[string]string{"mode": ModeDeadline}),
		// Every spread, small enough that a longer write still fires later
		// (the suite's Monotone check): a write of 15 ticks (40 ns) lands
		// after its deadline, one of 31 before.
		ModeDeadline + "/spread": {"irq_latency_spread": "p10=-5ns p90=+5ns", "past_deadline_latency": "10ns",
			"past_deadline_latency_spread": "p10=0 p90=+5ns", "eoi_cost_spread": "p50=+3ns"},
	} {
		t.Run(name, func(t *testing.T) {
			sdktest.RunClockEventDevice(t, func(*testing.T, sdk.Role) sdk.ClockEventDevice {
				return defaults{New().(*Plugin), over}
			})
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestScale checks what the clockevents core derives from the device, against
// the kernel's values (derivations in framework/clockevents TestConfig and
// TestScaleFromDriver).
func TestScale(t *testing.T) {
	tests := []struct {
		name string
		hz   int
		over map[string]string
		want clockmath.Scale
	}{
		{"deadline 3GHz", 1000, nil, clockmath.Scale{Mult: 12582912, Shift: 25, MinDeltaNs: 1000, MaxDeltaNs: 1466015503701, MaxSec: 600}},
		// tsc_khz truncates: 2.4000009 GHz -> 2400000 kHz -> 300 MHz.
		{"deadline 2.4GHz", 1000, map[string]string{"tsc_freq": "2.4000009e9"}, clockmath.Scale{Mult: 10066330, Shift: 25, MinDeltaNs: 1000, MaxDeltaNs: 1832519306808, MaxSec: 600}},
		{"oneshot 100MHz HZ=1000", 1000, map[string]string{"mode": "oneshot"}, clockmath.Scale{Mult: 26843545, Shift: 32, MinDeltaNs: 2401, MaxDeltaNs: 343597391201}},
		{"oneshot 25MHz HZ=1000", 1000, map[string]string{"mode": "oneshot", "bus_freq": "25e6"}, clockmath.Scale{Mult: 6708738, Shift: 32, MinDeltaNs: 9604, MaxDeltaNs: 1374829667303}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := configured(t, tt.hz, tt.over)
			d, err := clockevents.New(p, clockevents.Options{HZ: tt.hz})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Scale(); got != tt.want {
				t.Errorf("Scale() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestSpec checks the device setup_APIC_timer() registers.
func TestSpec(t *testing.T) {
	tests := []struct {
		name   string
		over   map[string]string
		devNm  string
		feat   sdk.DeviceFeatures
		rating int
		freq   float64
		max    uint64
	}{
		{"deadline ARAT", nil, "lapic-deadline", sdk.FeatOneshot | sdk.FeatPerCPU, 150, 375e6, ^uint64(0)},
		{"deadline no ARAT", map[string]string{"arat": "false"}, "lapic-deadline", sdk.FeatOneshot | sdk.FeatPerCPU | sdk.FeatC3Stop, 100, 375e6, ^uint64(0)},
		{"oneshot", map[string]string{"mode": "oneshot"}, "lapic", sdk.FeatOneshot | sdk.FeatPerCPU | sdk.FeatPeriodic, 150, 6.25e6, 0x7FFFFFFF},
	}
	for _, tt := range tests {
		s := configured(t, 1000, tt.over).Spec()
		if s.Name != tt.devNm || s.Features != tt.feat || s.Rating != tt.rating || s.FreqHz != tt.freq || s.MinDeltaTicks != 0xF || s.MaxDeltaTicks != tt.max || s.Channels != 2 {
			t.Errorf("%s: Spec() = %+v", tt.name, s)
		}
	}
}

// TestFireTime checks when the interrupt comes, by hand:
//
//	deadline, 3 GHz TSC, now 1 ms: TSC = 3,000,000; 100 ticks -> deadline
//	3,000,800 cycles = 1,000,266.67 ns -> 1000267 (first ns the TSC is there)
//	+ 50 ns latency. One tick (8 cycles) is already past when the WRMSR lands
//	at 1,000,060 ns: fires then + 50.
//	count-down, 100 MHz / 16 = 160 ns ticks: TMICT lands at 1,000,100 ns, the
//	divided counter reads floor(6250.625) = 6250; 15 ticks -> edge 6265 at
//	1,002,400 ns + 50.
func TestFireTime(t *testing.T) {
	now := ktime.Time(ktime.Millisecond)
	tests := []struct {
		name  string
		over  map[string]string
		ticks uint64
		want  ktime.Time
		cost  int64
	}{
		{"deadline", nil, 100, 1000267 + 50, 60},
		{"deadline already past", nil, 1, 1000060 + 50, 60},
		{"count-down", map[string]string{"mode": "oneshot"}, 15, 1002400 + 50, 100},
		{"count-down 32-bit register", map[string]string{"mode": "oneshot"}, 1 << 32, ktime.Max, 100},
	}
	for _, tt := range tests {
		p := configured(t, 1000, tt.over)
		r := p.SetNextEvent(1, now, tt.ticks)
		if r.ETIME || r.FireAt != tt.want || r.Cost != tt.cost {
			t.Errorf("%s: SetNextEvent(1, %v, %d) = %+v, want fire %v cost %d", tt.name, now, tt.ticks, r, tt.want, tt.cost)
		}
	}
}

// TestPeriodic: lapic_timer_set_periodic() loads lapic_timer_period/16 =
// 100e6/1000/16 = 6250 ticks of 160 ns: exactly one jiffy. The load lands at
// 400 ns (four register accesses), counter floor(2.5) = 2, so the ticks are
// at edges 6252, 12502, ...: 1,000,320 ns, 2,000,320 ns (+50 latency).
func TestPeriodic(t *testing.T) {
	p := configured(t, 1000, map[string]string{"mode": "oneshot"})
	cost, first := p.SetState(0, 0, sdk.StatePeriodic, 1_000_000)
	if cost != 400 || first != 1000320+50 {
		t.Fatalf("SetState(periodic) = (%d, %v), want (400, 1000370)", cost, first)
	}
	c, next := p.Ack(0, first)
	if c != 50 || next != 2000320+50 {
		t.Errorf("Ack = (%d, %v), want (50, 2000370)", c, next)
	}
	if _, fire := p.SetState(0, next, sdk.StateShutdown, 0); fire != ktime.Max {
		t.Errorf("shutdown fire = %v, want max", fire)
	}
	if _, next := p.Ack(0, next); next != ktime.Max {
		t.Errorf("Ack after shutdown = %v, want max", next)
	}
	d := configured(t, 1000, nil)
	if _, fire := d.SetState(0, 0, sdk.StatePeriodic, 1_000_000); fire != ktime.Max {
		t.Errorf("deadline mode periodic fire = %v, want max (no FEAT_PERIODIC)", fire)
	}
}

// TestConfigureErrors: problems are diagnostics naming the attribute.
func TestConfigureErrors(t *testing.T) {
	tests := []struct {
		name string
		role sdk.Role
		over map[string]string
		attr string
	}{
		{"broadcast role", "broadcast", nil, "plugin"},
		{"bad divide", "local", map[string]string{"mode": "oneshot", "divide": "3"}, "divide"},
		{"bus too slow", "local", map[string]string{"mode": "oneshot", "bus_freq": "500000"}, "bus_freq"},
		{"bad mode", "local", map[string]string{"mode": "periodic"}, "mode"},
		{"negative cost", "local", map[string]string{"eoi_cost": "-5"}, "eoi_cost"},
	}
	for _, tt := range tests {
		p := New().(*Plugin)
		d := p.Configure(sdk.Setup{CPUs: 2, HZ: 1000, Role: tt.role}, config(t, tt.over))
		found := false
		for _, x := range d {
			found = found || (x.Severity == sdk.SeverityError && x.Attribute == tt.attr)
		}
		if !found {
			t.Errorf("%s: Configure = %v, want an error on %q", tt.name, d, tt.attr)
		}
	}
}

// TestCounters: per-CPU counters in a stable order.
func TestCounters(t *testing.T) {
	p := configured(t, 1000, nil)
	p.SetState(1, 0, sdk.StateOneshot, 0)
	p.SetNextEvent(1, 0, 100)
	p.Ack(1, 1000)
	got := p.Counters()
	if len(got) != 10 || got[5] != (sdk.Counter{Name: "writes", CPU: 1, Value: 1}) || got[7] != (sdk.Counter{Name: "cost_ns", CPU: 1, Value: 100 + 60 + 50}) || got[8].Value != 1 {
		t.Errorf("Counters() = %+v", got)
	}
}

// TestChannelSize: a CPU's timer state is one cache line.
func TestChannelSize(t *testing.T) {
	if n := unsafe.Sizeof(channel{}); n != 64 {
		t.Errorf("channel is %d bytes, want 64", n)
	}
}

// TestIRQLatencySpread: with irq_latency_spread each write's interrupt comes
// irq_latency plus a deviation drawn from the quantiles (from the seeded
// stream: the same seed fires at the same times), so the lateness has a
// spread; without it every interrupt takes irq_latency. Either way the
// device declares its DeadlineModel (with the spread and its stream).
func TestIRQLatencySpread(t *testing.T) {
	over := map[string]string{"irq_latency": "20000", "irq_latency_spread": "p10=-8us p50=-2us p90=+6us p99=+90us"}
	fires := func(seed uint64, over map[string]string) []int64 {
		p := New().(*Plugin)
		if d := p.Configure(sdk.Setup{CPUs: 1, HZ: 250, Role: "local", Seed: seed}, config(t, over)); d.HasErrors() {
			t.Fatal(d)
		}
		var out []int64
		for i := range 2000 {
			now := ktime.Time(int64(i) * 1_000_000)
			r := p.SetNextEvent(0, now, 3000) // 1 us of TSC/8 at 3 GHz: due well after the write lands
			out = append(out, int64(r.FireAt-now))
		}
		return out
	}
	flat := fires(1, map[string]string{"irq_latency": "20000"})
	for _, f := range flat[1:] {
		if f != flat[0] {
			t.Fatalf("no spread: fire offsets %d and %d differ", flat[0], f)
		}
	}
	a, b := fires(1, over), fires(1, over)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, write %d: %d and %d", i, a[i], b[i])
		}
	}
	lo, hi := a[0], a[0]
	var above int
	for _, f := range a {
		lo, hi = min(lo, f), max(hi, f)
		if f > flat[0]+6000 {
			above++
		}
	}
	// The constant part is flat[0]-20 us; the drawn latency spans 12-110 us.
	base := flat[0] - 20000
	if lo-base > 12500 || hi-base < 100000 {
		t.Errorf("drawn latencies span %d..%d ns; want about 12000..110000", lo-base, hi-base)
	}
	if above < 100 || above > 300 { // P(dev > +6us) = 10%
		t.Errorf("%d of 2000 interrupts above p90; want about 200", above)
	}
	if m, ok := configured(t, 250, over).DeadlineModel(); !ok || m.LatencySpread.String() != "p10=-8us p50=-2us p90=+6us p99=+90us" || m.Stream != "lapic/local" {
		t.Errorf("with irq_latency_spread: DeadlineModel() = %+v, %v; want one with the spread, drawn from lapic/local", m, ok)
	}
	p := New().(*Plugin)
	if d := p.Configure(sdk.Setup{CPUs: 1, HZ: 250, Role: "local"}, config(t, map[string]string{"irq_latency_spread": "p50=5"})); !d.HasErrors() || d[0].Attribute != "irq_latency_spread" {
		t.Errorf("a spread whose deviation has no unit: diagnostics %v; want an error on irq_latency_spread", d)
	}
}

// TestPastDeadlineLatency: a write of a deadline that has passed by the
// time the write lands fires past_deadline_latency after it lands (KVM's
// start_sw_tscdeadline() expires it at once); a future deadline still fires
// irq_latency after the deadline; unset, both take irq_latency.
func TestPastDeadlineLatency(t *testing.T) {
	const now = ktime.Time(5_000_000)
	over := map[string]string{"deadline_write_cost": "8000", "irq_latency": "18000", "past_deadline_latency": "10us"}
	p := configured(t, 250, over)
	// 1 tick of TSC/8 at 3 GHz (2.7 ns): due long before the 8 us write lands.
	if got, want := p.SetNextEvent(0, now, 1).FireAt, now+8000+10000; got != want {
		t.Errorf("past deadline: FireAt %d, want the write's landing + 10 us = %d", got, want)
	}
	// 37500 ticks = 100 us ahead: the deadline, then irq_latency.
	if got, want := p.SetNextEvent(0, now, 37500).FireAt, now+100000+18000; got != want {
		t.Errorf("future deadline: FireAt %d, want %d", got, want)
	}
	if m, ok := p.DeadlineModel(); !ok || !m.PastDeadline || m.PastLatency != 10000 {
		t.Errorf("past_deadline_latency 10us: DeadlineModel() = %+v, %v; want PastDeadline with PastLatency 10000", m, ok)
	}
	// With its spread, past writes draw around past_deadline_latency (here
	// 10 us +- 2 us), future ones still take irq_latency exactly.
	over["past_deadline_latency_spread"] = "p10=-2us p90=+2us"
	p = configured(t, 250, over)
	seen := map[ktime.Time]bool{}
	for range 200 {
		f := p.SetNextEvent(0, now, 1).FireAt - now - 8000
		if f < 8000 || f > 12000 {
			t.Fatalf("past deadline with spread: latency %d, want 8..12 us", f)
		}
		seen[f] = true
	}
	if len(seen) < 50 {
		t.Errorf("past deadline with spread: %d distinct latencies in 200 writes; want a spread", len(seen))
	}
	if got, want := p.SetNextEvent(0, now, 37500).FireAt, now+100000+18000; got != want {
		t.Errorf("future deadline with a past spread: FireAt %d, want %d", got, want)
	}
	delete(over, "past_deadline_latency_spread")
	delete(over, "past_deadline_latency")
	p = configured(t, 250, over)
	if got, want := p.SetNextEvent(0, now, 1).FireAt, now+8000+18000; got != want {
		t.Errorf("unset: past deadline FireAt %d, want irq_latency after the landing = %d", got, want)
	}
	if m, ok := p.DeadlineModel(); !ok || m.PastDeadline {
		t.Errorf("past_deadline_latency unset: DeadlineModel() = %+v, %v; want one without PastDeadline", m, ok)
	}
	for _, bad := range []string{"10", "-1us"} {
		q := New().(*Plugin)
		d := q.Configure(sdk.Setup{CPUs: 1, HZ: 250, Role: "local"}, config(t, map[string]string{"past_deadline_latency": bad}))
		if !d.HasErrors() || d[0].Attribute != "past_deadline_latency" {
			t.Errorf("past_deadline_latency %q: diagnostics %v; want an error on it", bad, d)
		}
	}
}

// TestEOICostSpread: each EOI costs eoi_cost, or a draw around it when
// eoi_cost_spread is set (a guest's EOI exits to the hypervisor), which the
// DeadlineModel declares; a malformed spread is an error on its attribute.
func TestEOICostSpread(t *testing.T) {
	over := map[string]string{"eoi_cost": "7000"}
	p := configured(t, 250, over)
	if c, next := p.Ack(0, 0); c != 7000 || next != ktime.Max {
		t.Errorf("Ack = %d, %d; want 7000 and no next event", c, next)
	}
	over["eoi_cost_spread"] = "p10=-2us p90=+2us"
	p = configured(t, 250, over)
	seen := map[int64]bool{}
	for range 200 {
		c, _ := p.Ack(0, 0)
		if c < 5000 || c > 9000 {
			t.Fatalf("EOI with spread: %d ns, want 5..9 us", c)
		}
		seen[c] = true
	}
	if len(seen) < 50 {
		t.Errorf("%d distinct EOI costs in 200; want a spread", len(seen))
	}
	if m, ok := p.DeadlineModel(); !ok || m.AckCostSpread.String() != "p10=-2us p90=+2us" {
		t.Errorf("with eoi_cost_spread: DeadlineModel() = %+v, %v; want one with the spread", m, ok)
	}
	q := New().(*Plugin)
	if d := q.Configure(sdk.Setup{CPUs: 1, HZ: 250, Role: "local"}, config(t, map[string]string{"eoi_cost_spread": "p50=5"})); !d.HasErrors() || d[0].Attribute != "eoi_cost_spread" {
		t.Errorf("a spread whose deviation has no unit: diagnostics %v; want an error on eoi_cost_spread", d)
	}
}
