package hpet

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

const us = ktime.Microsecond

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

func configured(t *testing.T, role sdk.Role, over map[string]string) *Plugin {
	t.Helper()
	p := New().(*Plugin)
	if d := p.Configure(sdk.Setup{CPUs: 2, HZ: 250, Seed: 7, Role: role}, config(t, over)); d.HasErrors() {
		t.Fatalf("Configure(%s, %v) = %v", role, over, d)
	}
	return p
}

func TestConformance(t *testing.T) {
	sdktest.RunClockEventDevice(t, func(*testing.T, sdk.Role) sdk.ClockEventDevice { return New().(*Plugin) })
}

// TestScale: a 14.31818 MHz HPET reports HPET_PERIOD = 69841279 fs
// (round(10^15/14318180)); hpet_enable() truncates 10^15/69841279 =
// 14318179.97 to hpet_freq = 14318179 Hz, one less than the nominal rate.
// clockevents_config() then gives (as in framework/clockevents TestConfig):
// sec 149, sftacc 26, mult = (14318179<<32 + 5e8)/1e9 = 61496111 (61496110.54
// rounded) at shift 32; min = (192<<32 + mult-1)/mult = 13410 ns; max =
// (0x7FFFFFFF<<32 + mult-1)/mult = 149983013277 ns.
func TestScale(t *testing.T) {
	for _, role := range []sdk.Role{sdk.RoleBroadcast, sdk.RoleLocal} {
		p := configured(t, role, nil)
		if p.periodFs != 69841279 || p.Spec().FreqHz != 14318179 {
			t.Errorf("%s: period %d fs, FreqHz %g; want 69841279 fs, 14318179", role, p.periodFs, p.Spec().FreqHz)
		}
		d, err := clockevents.New(p, clockevents.Options{HZ: 250})
		if err != nil {
			t.Fatal(err)
		}
		want := clockmath.Scale{Mult: 61496111, Shift: 32, MinDeltaNs: 13410, MaxDeltaNs: 149983013277, MaxSec: 149}
		if got := d.Scale(); got != want {
			t.Errorf("%s: Scale() = %+v, want %+v", role, got, want)
		}
	}
}

// TestSpec checks the two registrations.
func TestSpec(t *testing.T) {
	b := configured(t, "broadcast", nil).Spec()
	if b.Name != "hpet" || b.Features != sdk.FeatOneshot|sdk.FeatPeriodic || b.Rating != 50 || b.Channels != 1 {
		t.Errorf("broadcast Spec() = %+v, want legacy channel 0: oneshot|periodic, rating 50, 1 channel", b)
	}
	l := configured(t, "local", nil).Spec()
	if l.Features != sdk.FeatOneshot|sdk.FeatPerCPU || l.Rating != 110 || l.Channels != 2 {
		t.Errorf("local Spec() = %+v, want MSI channels: oneshot|percpu, rating 110, one per CPU", l)
	}
}

// fixedDelay injects delay into the programmings listed in hits (0-based).
type fixedDelay struct {
	delay int64
	hits  map[int]bool
	n     int
}

func (f *fixedDelay) Delay(start, end ktime.Time) int64 {
	n := f.n
	f.n++
	if f.hits[n] {
		return f.delay
	}
	return 0
}

func hitsFirst(k int) map[int]bool {
	m := map[int]bool{}
	for i := range k {
		m[i] = true
	}
	return m
}

// TestRace checks hpet_clkevt_set_next_event()'s -ETIME decision by hand, with
// the 69.841279 ns counter period, 1 us reads and 100 ns writes, programming
// 214 ticks (15 us) at 1 ms:
//
//	the first read completes at 1,001,000 ns: counter 14332, cnt = 14546;
//	clean: write ends 1,001,100, read-back at 1,002,100 reads 14348:
//	res = 198 >= 128, fires at tick 14546 = 1,015,912 ns (+1 us latency);
//	10 us SMI before the write: read-back at 1,012,100 reads 14491:
//	res = 55 < 128: -ETIME.
func TestRace(t *testing.T) {
	now := ktime.Time(ktime.Millisecond)
	tests := []struct {
		name  string
		delay int64
		etime bool
		cost  int64
		fire  ktime.Time
	}{
		{"clean", 0, false, 2100, 1015912 + 1000},
		{"10us SMI", 10 * us, true, 12100, 1015912 + 1000},
	}
	for _, tt := range tests {
		p := configured(t, "broadcast", nil)
		p.SetInterference(&fixedDelay{delay: tt.delay, hits: hitsFirst(1)})
		p.SetState(0, 0, sdk.StateOneshot, 0)
		r := p.SetNextEvent(0, now, 214)
		if r.ETIME != tt.etime || r.Cost != tt.cost || r.FireAt != tt.fire {
			t.Errorf("%s: SetNextEvent(0, 1ms, 214) = %+v, want etime %v cost %d fire %v", tt.name, r, tt.etime, tt.cost, tt.fire)
		}
	}
}

// TestMissedComparator: a comparator the counter has already passed when the
// write lands matches only after the 32-bit wrap (2^32 * 69.84 ns ~ 300 s).
func TestMissedComparator(t *testing.T) {
	p := configured(t, "broadcast", nil)
	p.SetInterference(&fixedDelay{delay: 1000 * us, hits: hitsFirst(1)})
	p.SetState(0, 0, sdk.StateOneshot, 0)
	now := ktime.Time(ktime.Millisecond)
	r := p.SetNextEvent(0, now, 192)
	if !r.ETIME {
		t.Fatalf("SetNextEvent with a 1 ms SMI = %+v, want -ETIME", r)
	}
	if d := r.FireAt.Sub(now); d < 299*ktime.Second || d > 301*ktime.Second {
		t.Errorf("missed comparator fires %d ns later, want after the ~300 s wrap", d)
	}
}

// TestScenario7 is scenario 7 of docs/reference/hrtimer-clockevents.md through the clockevents core: a 10 us SMI between COUNTER read and
// CMP write on a 15 us program.
func TestScenario7(t *testing.T) {
	now := ktime.Time(ktime.Second)
	setup := func(hits int) (*clockevents.Device, *Plugin) {
		p := configured(t, "broadcast", nil)
		p.SetInterference(&fixedDelay{delay: 10 * us, hits: hitsFirst(hits)})
		d, err := clockevents.New(p, clockevents.Options{HZ: 250})
		if err != nil {
			t.Fatal(err)
		}
		d.SetState(0, 0, sdk.StateOneshot, 0)
		return d, p
	}
	t.Run("force=0", func(t *testing.T) {
		d, _ := setup(1)
		r := d.Program(0, now, now.Add(15*us), false)
		if !r.ETIME || r.Writes != 1 || r.Retries != 0 {
			t.Errorf("Program(force=0) = %+v, want -ETIME from one write (a failed hrtimer pass)", r)
		}
	})
	t.Run("one clean retry", func(t *testing.T) {
		d, _ := setup(1)
		r := d.Program(0, now, now.Add(15*us), true)
		if r.ETIME || r.Writes != 2 || r.Retries != 1 || r.Raises != 0 || r.FireAt == ktime.Max {
			t.Errorf("Program(force=1) = %+v, want success after one retry", r)
		}
		if s := d.Stats(0); s.Retries != 1 || s.ETIME != 1 {
			t.Errorf("Stats = %+v, want retries 1, etime 1", s)
		}
	})
	t.Run("persistent interference", func(t *testing.T) {
		d, _ := setup(4)
		r := d.Program(0, now, now.Add(15*us), true)
		if r.ETIME || r.Raises != 1 || d.MinDeltaNs(0) != 20115 || r.Retries != 4 {
			t.Errorf("Program = %+v min_delta_ns %d, want one raise 13410 -> 20115 after 3 failed retries", r, d.MinDeltaNs(0))
		}
		want := []string{"CE: hpet increased min_delta_ns to 20115 nsec"}
		if got := r.Log(d.Name(), 250); !reflect.DeepEqual(got, want) {
			t.Errorf("Log = %q, want %q", got, want)
		}
	})
}

// TestSMISource: the seeded Poisson source makes the race happen in runs,
// deterministically.
func TestSMISource(t *testing.T) {
	run := func(seed uint64, rate string) []clockevents.ProgramResult {
		p := New().(*Plugin)
		if d := p.Configure(sdk.Setup{CPUs: 1, HZ: 1000, Seed: seed, Role: "broadcast"},
			config(t, map[string]string{"smi_rate": rate, "smi_duration": "10000"})); d.HasErrors() {
			t.Fatal(d)
		}
		d, err := clockevents.New(p, clockevents.Options{HZ: 1000})
		if err != nil {
			t.Fatal(err)
		}
		d.SetState(0, 0, sdk.StateOneshot, 0)
		var out []clockevents.ProgramResult
		now := ktime.Time(ktime.Millisecond)
		for range 2000 {
			r := d.Program(0, now, now.Add(15*us), true)
			out = append(out, r)
			now = now.Add(50 * us)
		}
		return out
	}
	count := func(rs []clockevents.ProgramResult) (etime int) {
		for _, r := range rs {
			etime += r.ETIMEs
		}
		return etime
	}
	// 100k SMIs/s, mean gap 10 us against a 1 us read window every 50 us:
	// about one programming in ten is hit.
	a, b := run(1, "1e5"), run(1, "1e5")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed gave different runs")
	}
	if n := count(a); n < 50 || n > 600 {
		t.Errorf("ETIMEs with smi_rate 1e5 = %d, want a few hundred", n)
	}
	if reflect.DeepEqual(a, run(2, "1e5")) {
		t.Errorf("different seeds gave identical runs")
	}
	if n := count(run(1, "0")); n != 0 {
		t.Errorf("ETIMEs without SMIs = %d, want 0", n)
	}
}

// TestPeriodic: hpet_clkevt_set_state_periodic() at HZ=250 adds
// (4e6 * 61496111) >> 32 = 57272 cycles per tick (3,999,949 ns).
func TestPeriodic(t *testing.T) {
	p := configured(t, "broadcast", nil)
	if p.periodTicks != 57272 {
		t.Fatalf("periodTicks = %d, want 57272", p.periodTicks)
	}
	cost, first := p.SetState(0, 0, sdk.StatePeriodic, 4_000_000)
	if cost != 4*1000+5*100+1000 {
		t.Errorf("periodic setup cost %d, want 5500", cost)
	}
	at := first
	for i := range 4 {
		_, next := p.Ack(0, at)
		if gap := next.Sub(at); gap < 3_999_949 || gap > 3_999_950 {
			t.Errorf("tick %d gap %d ns, want 57272 cycles = 3999949..50 ns", i, gap)
		}
		at = next
	}
	l := configured(t, "local", nil)
	if _, fire := l.SetState(0, 0, sdk.StatePeriodic, 4_000_000); fire != ktime.Max {
		t.Errorf("per-CPU channel periodic fire %v, want max (no FEAT_PERIODIC)", fire)
	}
}

// TestOneshotStopped: the driver has no set_state_oneshot_stopped, so the
// kernel's tick_program_event(KTIME_MAX) leaves the comparator armed and the
// interrupt still comes.
func TestOneshotStopped(t *testing.T) {
	p := configured(t, "local", nil)
	d, err := clockevents.New(p, clockevents.Options{HZ: 250})
	if err != nil {
		t.Fatal(err)
	}
	d.SetState(1, 0, sdk.StateOneshot, 0)
	now := ktime.Time(ktime.Millisecond)
	armed := d.Program(1, now, now.Add(500*us), false).FireAt
	r := d.Program(1, now.Add(10*us), ktime.Max, false)
	if d.State(1) != sdk.StateOneshotStopped || r.FireAt != armed || d.FireAt(1) != armed || r.Cost != 0 {
		t.Errorf("Program(Max) = %+v state %v fire %v, want stopped, armed comparator %v still firing, no cost", r, d.State(1), d.FireAt(1), armed)
	}
	// Back to ONESHOT costs nothing: the kernel never left it.
	r = d.Program(1, now.Add(20*us), now.Add(900*us), false)
	if r.Cost != 2100 || r.Writes != 1 {
		t.Errorf("Program after stop = %+v, want one 2.1 us write and no state cost", r)
	}
}

// TestConfigureErrors: problems are diagnostics naming the attribute.
func TestConfigureErrors(t *testing.T) {
	tests := []struct {
		name string
		cpus int
		role sdk.Role
		over map[string]string
		attr string
	}{
		{"too slow", 2, "broadcast", map[string]string{"freq": "1e6"}, "freq"},
		{"local channels mismatch", 2, "local", map[string]string{"channels": "3"}, "channels"},
		{"too many comparators", 2, "broadcast", map[string]string{"channels": "33"}, "channels"},
		{"64 CPUs per-CPU", 64, "local", nil, "plugin"},
		{"negative smi rate", 2, "broadcast", map[string]string{"smi_rate": "-1"}, "smi_rate"},
		{"fractional latch", 2, "broadcast", map[string]string{"cmp_latch_cycles": "1.5"}, "cmp_latch_cycles"},
	}
	for _, tt := range tests {
		d := New().(*Plugin).Configure(sdk.Setup{CPUs: tt.cpus, HZ: 250, Role: tt.role}, config(t, tt.over))
		found := false
		for _, x := range d {
			found = found || (x.Severity == sdk.SeverityError && x.Attribute == tt.attr)
		}
		if !found {
			t.Errorf("%s: Configure = %v, want an error on %q", tt.name, d, tt.attr)
		}
	}
}

// TestCounters: machine-wide in broadcast use, per CPU in local use.
func TestCounters(t *testing.T) {
	b := configured(t, "broadcast", nil)
	b.SetState(0, 0, sdk.StateOneshot, 0)
	b.SetNextEvent(0, 0, 1000)
	got := b.Counters()
	if len(got) != 6 || got[0] != (sdk.Counter{Name: "writes", CPU: -1, Value: 1}) || got[2].Value != 1100+2100 {
		t.Errorf("broadcast Counters() = %+v", got)
	}
	l := configured(t, "local", nil)
	if got := l.Counters(); len(got) != 12 || got[6].CPU != 1 {
		t.Errorf("local Counters() = %+v", got)
	}
}
