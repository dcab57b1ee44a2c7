package calibrate

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestCentre(t *testing.T) {
	rep := func(v float64, n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = v
		}
		return x
	}
	for _, tc := range []struct {
		name string
		x    []float64
		res  float64
		want float64
	}{
		// A 300 ns interval read through 1 us timestamps: 0 or 1 us, 30% ones.
		{"quantised", append(rep(0, 70), rep(1000, 30)...), 1000, 300},
		// The same with a preemption of 80 us in it: fenced off.
		{"quantised with an outlier", append(append(rep(0, 70), rep(1000, 30)...), 80000), 1000, 300},
		{"ns samples with an outlier", []float64{100, 110, 120, 130, 140, 1e6}, 1, 120},
		{"one sample", []float64{42}, 1, 42},
	} {
		if got := Centre(tc.x, tc.res); !near(got, tc.want, 1e-9) {
			t.Errorf("%s: Centre = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !math.IsNaN(Centre(nil, 1)) {
		t.Error("Centre(nil) is not NaN")
	}
}

func TestReduce(t *testing.T) {
	// 1000 samples of 2 us spanning one interior event, tracepoint 500 ns:
	// 2000 - 500*(1+1) = 1000.
	iv := make([]Interval, 1000)
	for i := range iv {
		iv[i] = Interval{NS: 2000, Interior: 1}
	}
	e := Reduce(iv, 1, 500, 10)
	if e.N != 1000 || !near(e.Centre, 1000, 1e-9) || !near(e.Median, 1000, 1e-9) || e.Interior != 1 {
		t.Errorf("Reduce = %+v, want n 1000, centre and median 1000, interior 1", e)
	}
	// The bootstrap finds no spread in constant samples: the error is the
	// resolution floor and the tracepoint's 2 x 10 ns in quadrature.
	if want := math.Hypot(1/math.Sqrt(12*1000), 20); !near(e.SE, want, 1e-9) {
		t.Errorf("SE = %v, want %v", e.SE, want)
	}
	if Reduce(nil, 1, 0, 0).Constrained() {
		t.Error("no samples: constrained")
	}
	// Same samples, same figures.
	x := []Interval{{100, 0}, {300, 0}, {200, 0}, {250, 0}, {900, 0}}
	if a, b := Reduce(x, 1, 0, 0), Reduce(x, 1, 0, 0); a != b || a.SE == 0 {
		t.Errorf("Reduce twice: %+v, %+v (want equal, SE > 0)", a, b)
	}
}

func TestPool(t *testing.T) {
	for _, tc := range []struct {
		name     string
		es       []Estimate
		centre   float64
		se       float64
		n        int
		constrnd bool
	}{
		{"agreeing bundles: inverse-variance mean", []Estimate{{N: 10, Centre: 100, SE: 10}, {N: 30, Centre: 110, SE: 20}},
			(100/100.0 + 110/400.0) / (1/100.0 + 1/400.0), 1 / math.Sqrt(1/100.0+1/400.0), 40, true},
		{"disagreeing bundles: scaled by the Birge ratio", []Estimate{{N: 10, Centre: 100, SE: 1}, {N: 10, Centre: 200, SE: 1}},
			150, 1 / math.Sqrt(2) * math.Sqrt(5000), 20, true},
		{"an unconstrained bundle is left out", []Estimate{{}, {N: 5, Centre: 7, SE: 2}}, 7, 2, 5, true},
		{"none", []Estimate{{}, {}}, 0, 0, 0, false},
	} {
		p := Pool(tc.es)
		if p.Constrained() != tc.constrnd || p.N != tc.n || !near(p.Centre, tc.centre, 1e-9) || !near(p.SE, tc.se, 1e-9) {
			t.Errorf("%s: Pool = %+v, want centre %v se %v n %d", tc.name, p, tc.centre, tc.se, tc.n)
		}
	}
}

// TestFit: each parameter from its estimators, a sum split as documented,
// the lapic attributes only for a local APIC, unconstrained ones named.
func TestFit(t *testing.T) {
	const n = 400
	iv := func(ns int64, interior int) []Interval {
		x := make([]Interval, n)
		for i := range x {
			x[i] = Interval{NS: ns, Interior: interior}
		}
		return x
	}
	m := &Measurement{Resolution: 1, Events: 1, Samples: map[string][]Interval{
		ETracepoint:   iv(500, 0),
		EIRQEntry:     iv(1500, 0),  // 1000 after the tracepoint
		EIRQExit:      iv(700, 0),   // 200
		ESwitchBusy:   iv(2500, 0),  // 2000: context switch 1800
		EStartProgram: iv(11000, 1), // 10000
		EStartPlain:   iv(2500, 0),  // 2000: device write 8000
		ELatenessBusy: iv(16500, 0), // 16000: irq latency 15000
	}}
	defaults := func(k string) float64 {
		return map[string]float64{"hrtimer.interrupt_entry_ns": 100, "kernel.irq_entry_cost": 250}[k]
	}
	_, _, params := Fit([]Bundle{{Name: "a", M: m, LAPIC: true}}, defaults)
	got := map[string]Param{}
	for _, p := range params {
		got[p.Key()] = p
	}
	for key, want := range map[string]float64{
		"kernel.irq_entry_cost":      900, // 1000 less hrtimer.interrupt_entry_ns
		"kernel.irq_exit_cost":       200,
		"kernel.context_switch_cost": 1800,
		"lapic.deadline_write_cost":  8000,
		"lapic.irq_latency":          15000,
	} {
		p := got[key]
		if !p.Constrained || !near(p.Value, want, 1e-6) || !p.Written {
			t.Errorf("%s = %+v, want %v, written", key, p, want)
		}
	}
	if p := got["kernel.irq_entry_cost"]; p.Default != 250 || !strings.Contains(p.From, "hrtimer.interrupt_entry_ns (kept at 100ns)") {
		t.Errorf("irq_entry_cost: default %v, from %q", p.Default, p.From)
	}
	if p := got["kernel.wakeup_cost"]; p.Constrained || !strings.Contains(p.Why, "no wakeup interval") {
		t.Errorf("wakeup_cost = %+v, want not constrained: no wakeup interval", p)
	}
	if p := got["kernel.signal_deliver_cost"]; p.Written {
		t.Errorf("signal_deliver_cost is written: %+v", p)
	}
	// A past deadline's interval to local_timer_entry is the entry and the
	// EOI (the interrupt is injected at the write): eoi_cost is what is
	// left of it after irq_entry_cost, irq_latency what is left of the
	// lateness after both, and past_deadline_latency is written as 0.
	m.Samples[EPastDeadline] = iv(9500, 0) // 9000
	_, _, params = Fit([]Bundle{{Name: "a", M: m, LAPIC: true}}, defaults)
	got = map[string]Param{}
	for _, p := range params {
		got[p.Key()] = p
	}
	for key, want := range map[string]float64{
		"lapic.eoi_cost":              8100, // 9000 - 900 of irq_entry_cost
		"lapic.irq_latency":           6900, // 16000 - 1000 - 8100
		"lapic.past_deadline_latency": 0,
	} {
		if p := got[key]; !p.Constrained || !near(p.Value, want, 1e-6) || !p.Written {
			t.Errorf("with past_deadline: %s = %+v, want %v, written", key, p, want)
		}
	}
	delete(m.Samples, EPastDeadline)
	_, _, params = Fit([]Bundle{{Name: "a", M: m, LAPIC: true}}, defaults)
	for _, p := range params {
		if p.Key() == "lapic.past_deadline_latency" && p.Constrained {
			t.Errorf("past_deadline_latency written without past_deadline samples: %+v", p)
		}
	}
	_, _, params = Fit([]Bundle{{Name: "a", M: m, LAPIC: false}}, defaults)
	for _, p := range params {
		if p.Plugin == "lapic" && p.Constrained {
			t.Errorf("%s constrained by a bundle without a local APIC", p.Key())
		}
	}
	// A negative estimate is clamped at zero, with a note.
	m.Samples[EIRQExit] = iv(100, 0)
	_, _, params = Fit([]Bundle{{Name: "a", M: m, LAPIC: true}}, defaults)
	for _, p := range params {
		if p.Key() == "kernel.irq_exit_cost" && (p.Value != 0 || !strings.Contains(p.Note, "below zero")) {
			t.Errorf("negative irq_exit_cost: %+v", p)
		}
	}
}

// TestFitSpread: irq_latency's spread is, per bundle with enough samples,
// the quantiles of the lateness samples' deviations from that bundle's own
// centre, and the median of each quantile over those bundles; a bundle with
// too few samples is left out, and too few samples in all leave no spread
// (the profile then writes none and the model draws nothing).
func TestFitSpread(t *testing.T) {
	const n = 2000
	bundle := func(name string, base int64, tail int64) Bundle {
		idle := make([]Interval, n)
		for i := range idle {
			// uniform 0..9.995 us above base, one sample in 100 has tail more
			idle[i] = Interval{NS: base + int64(i%2000)*5}
			if i%100 == 0 {
				idle[i].NS += tail
			}
		}
		busy := make([]Interval, 50)
		for i := range busy {
			busy[i] = Interval{NS: base + 5000}
		}
		return Bundle{Name: name, LAPIC: true, M: &Measurement{Resolution: 1, Events: 1, Samples: map[string][]Interval{
			EIRQEntry: {{NS: 1000}, {NS: 1000}}, ELatenessBusy: busy, ELatenessIdle: idle,
		}}}
	}
	defaults := func(string) float64 { return 0 }
	spreadOf := func(bs ...Bundle) Param {
		_, _, params := Fit(bs, defaults)
		for _, p := range params {
			if p.Key() == "lapic.irq_latency" {
				return p
			}
		}
		t.Fatal("no lapic.irq_latency")
		return Param{}
	}
	// Three bundles, base and tail differing: the centre of each is its
	// own, the tail's quantile the median bundle's (100 us), not the
	// largest (1 ms).
	p := spreadOf(bundle("a", 10000, 100000), bundle("b", 20000, 1000000), bundle("c", 15000, 50000))
	if p.Spread.Zero() || p.SpreadN != 3*(n+50) {
		t.Fatalf("spread %v from %d samples; want one from %d", p.Spread, p.SpreadN, 3*(n+50))
	}
	at := func(pct float64) float64 {
		for i, pp := range p.Spread.P {
			if near(pp, pct/100, 1e-9) {
				return p.Spread.Dev[i]
			}
		}
		t.Fatalf("no p%g in %v", pct, p.Spread)
		return 0
	}
	// Within a bundle: the body is 0..10 us around a fenced mean near 5 us
	// (the 1% tail lies beyond the fences); p99.9 is in the tail.
	if d := at(50); math.Abs(d) > 300 {
		t.Errorf("p50 deviation %g ns; want about 0", d)
	}
	if d := at(99.9); d < 90000 || d > 110000 {
		t.Errorf("p99.9 deviation %g ns; want about the median bundle's tail, 100 us", d)
	}
	// Too few samples: bundles below 1000 are left out, and no spread.
	small := bundle("s", 10000, 0)
	small.M.Samples[ELatenessIdle] = small.M.Samples[ELatenessIdle][:500]
	if p := spreadOf(small); !p.Spread.Zero() || !strings.Contains(p.SpreadWhy, "fewer than 1000") {
		t.Errorf("spread from 550 samples = %v (%q); want none, and why", p.Spread, p.SpreadWhy)
	}
}
