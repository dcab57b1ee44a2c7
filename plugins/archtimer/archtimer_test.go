package archtimer

import (
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/clockmath"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

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

func configured(t *testing.T, over map[string]string) *Plugin {
	t.Helper()
	p := New().(*Plugin)
	if d := p.Configure(sdk.Setup{CPUs: 2, HZ: 250, Role: "local"}, config(t, over)); d.HasErrors() {
		t.Fatalf("Configure(%v) = %v", over, d)
	}
	return p
}

// programmingDefault makes the suite's defaults select another programming.
type programmingDefault struct {
	*Plugin
	mode string
}

func (m programmingDefault) Schema() sdk.Schema {
	s := m.Plugin.Schema()
	for i := range s.Attributes {
		if s.Attributes[i].Name == "programming" {
			s.Attributes[i].Default = m.mode
		}
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, mode := range []string{ModeCVAL, ModeTVAL} {
		t.Run(mode, func(t *testing.T) {
			sdktest.RunClockEventDevice(t, func(*testing.T, sdk.Role) sdk.ClockEventDevice {
				return programmingDefault{New().(*Plugin), mode}
			})
		})
	}
}

// TestCounterWidth checks arch_counter_get_width(): ilog2(40 years of
// cycles - 1) + 1 clamped to 56..64. 40 y = 1,261,440,000 s.
func TestCounterWidth(t *testing.T) {
	tests := []struct {
		rate uint64
		want int
	}{
		{19_200_000, 56},    // 2.42e16 needs 55 bits -> 56
		{24_000_000, 56},    // 3.03e16 -> 55 -> 56
		{1_000_000_000, 61}, // 1.26e18 -> 61 bits
		{4_000_000_000, 63}, // 5.05e18 -> 63 bits
	}
	for _, tt := range tests {
		if got := counterWidth(tt.rate); got != tt.want {
			t.Errorf("counterWidth(%d) = %d, want %d", tt.rate, got, tt.want)
		}
	}
}

// TestScale: the clockevents core's scale of the registered device; values
// derived in framework/clockevents TestConfig.
func TestScale(t *testing.T) {
	tests := []struct {
		name string
		over map[string]string
		want clockmath.Scale
	}{
		{"cval 24MHz", nil, clockmath.Scale{Mult: 12884902, Shift: 29, MinDeltaNs: 1000, MaxDeltaNs: 1431655752888, MaxSec: 600}},
		{"cval 19.2MHz", map[string]string{"freq": "19.2e6"}, clockmath.Scale{Mult: 10307922, Shift: 29, MinDeltaNs: 1000, MaxDeltaNs: 1789569621666, MaxSec: 600}},
		{"cval 50MHz", map[string]string{"freq": "50e6"}, clockmath.Scale{Mult: 13421773, Shift: 28, MinDeltaNs: 1000, MaxDeltaNs: 1374389514240, MaxSec: 600}},
		{"cval 1GHz", map[string]string{"freq": "1e9"}, clockmath.Scale{Mult: 8388608, Shift: 23, MinDeltaNs: 1000, MaxDeltaNs: 2199023255551, MaxSec: 600}},
		{"tval 24MHz", map[string]string{"programming": "tval"}, clockmath.Scale{Mult: 103079215, Shift: 32, MinDeltaNs: 1000, MaxDeltaNs: 89478485382, MaxSec: 89}},
	}
	for _, tt := range tests {
		d, err := clockevents.New(configured(t, tt.over), clockevents.Options{HZ: 250})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Scale(); got != tt.want {
			t.Errorf("%s: Scale() = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestFireTime, by hand at 24 MHz (41.67 ns per tick), now = 1 ms:
//
//	10 ns accesses: the counter is read at 1,000,020 ns = 24000.48 -> 24000;
//	CVAL 24015 is reached at 1,000,625 ns (+50 latency); cost 4 accesses.
//	TVAL: the TVAL write is the second access too: same CVAL, 3 accesses.
//	1 us accesses (a trapping guest): counter at 1,002,000 = 24048, CVAL
//	24063 at 1,002,625 ns, but CTL enables the timer only at 1,004,000: it
//	fires then.
func TestFireTime(t *testing.T) {
	now := ktime.Time(ktime.Millisecond)
	tests := []struct {
		name string
		over map[string]string
		fire ktime.Time
		cost int64
	}{
		{"cval", nil, 1000625 + 50, 40},
		{"tval", map[string]string{"programming": "tval"}, 1000625 + 50, 30},
		{"slow sysregs", map[string]string{"sysreg_cost": "1000"}, 1004000 + 50, 4000},
	}
	for _, tt := range tests {
		r := configured(t, tt.over).SetNextEvent(1, now, 15)
		if r.ETIME || r.FireAt != tt.fire || r.Cost != tt.cost {
			t.Errorf("%s: SetNextEvent(1, 1ms, 15) = %+v, want fire %v cost %d", tt.name, r, tt.fire, tt.cost)
		}
	}
}

// TestSpec checks __arch_timer_setup()'s device.
func TestSpec(t *testing.T) {
	s := configured(t, map[string]string{"c3stop": "true"}).Spec()
	want := sdk.DeviceSpec{Name: "arch_sys_timer", Features: sdk.FeatOneshot | sdk.FeatPerCPU | sdk.FeatC3Stop,
		FreqHz: 24e6, MinDeltaTicks: 0xf, MaxDeltaTicks: 1<<56 - 1, Rating: 450, Channels: 2}
	if s != want {
		t.Errorf("Spec() = %+v, want %+v", s, want)
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
		{"slow counter", "local", map[string]string{"freq": "32768"}, "freq"},
		{"bad programming", "local", map[string]string{"programming": "tick"}, "programming"},
		{"negative cost", "local", map[string]string{"ack_cost": "-1"}, "ack_cost"},
	}
	for _, tt := range tests {
		d := New().(*Plugin).Configure(sdk.Setup{CPUs: 2, HZ: 250, Role: tt.role}, config(t, tt.over))
		found := false
		for _, x := range d {
			found = found || (x.Severity == sdk.SeverityError && x.Attribute == tt.attr)
		}
		if !found {
			t.Errorf("%s: Configure = %v, want an error on %q", tt.name, d, tt.attr)
		}
	}
}

// TestAckAndCounters: the handler masks the timer; nothing fires again until
// reprogrammed; counters per CPU.
func TestAckAndCounters(t *testing.T) {
	p := configured(t, nil)
	p.SetState(0, 0, sdk.StateShutdown, 0)
	r := p.SetNextEvent(0, 0, 24000)
	cost, next := p.Ack(0, r.FireAt)
	if cost != 70 || next != ktime.Max {
		t.Errorf("Ack = (%d, %v), want (70, max)", cost, next)
	}
	got := p.Counters()
	if len(got) != 10 || got[0] != (sdk.Counter{Name: "writes", CPU: 0, Value: 1}) || got[2].Value != 20+40+70 || got[3].Value != 1 {
		t.Errorf("Counters() = %+v", got)
	}
}
