package hrtimer

import (
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

func TestInfo(t *testing.T) {
	info := New().Info()
	if info.Kind != sdk.KindHRTimer || info.Name != "hrtimer" || info.Version == "" {
		t.Errorf("Info() = %+v, want kind hrtimer, name hrtimer, a version", info)
	}
}

// TestSchemaDefaults checks that the schema's defaults decode to DefaultConfig
// and that the defaults are the mainline strategies.
func TestSchemaDefaults(t *testing.T) {
	c := sdk.Config{}
	for _, a := range New().Schema().Attributes {
		if a.Name == "plugin" || a.Name == "isolation" {
			t.Errorf("schema declares the host's attribute %q", a.Name)
		}
		if len(a.OneOf) > 0 && !slices.Contains(a.OneOf, a.Default) {
			t.Errorf("attribute %s default %q not in %v", a.Name, a.Default, a.OneOf)
		}
		c[a.Name] = a.Default
	}
	got, diags := decodeConfig(c)
	if diags.HasErrors() || got != DefaultConfig() {
		t.Errorf("decodeConfig(defaults) = %+v, %v; want %+v", got, diags, DefaultConfig())
	}
	want := Config{HangDelay: HangMaxHangTime, SoftirqNext: SoftirqUpdated, Restart: RestartDeferred, IPI: IPINeeded}
	got.Costs = Costs{}
	if got != want {
		t.Errorf("default strategies = %+v, want mainline %+v", got, want)
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name     string
		setup    sdk.Setup
		over     map[string]string
		wantAttr string // attribute of the first error; "" = no error expected
		wantErr  bool
	}{
		{"defaults", highRes(2), nil, "", false},
		{"era A", highRes(1), map[string]string{"hang_delay": "proportional", "softirq_next": "stale", "restart": "double", "clock_was_set_ipi": "all"}, "", false},
		{"fractional cost", highRes(1), map[string]string{"start_ns": "150.6"}, "", false},
		{"unknown hang", highRes(1), map[string]string{"hang_delay": "never"}, "hang_delay", true},
		{"unknown restart", highRes(1), map[string]string{"restart": "triple"}, "restart", true},
		{"negative cost", highRes(1), map[string]string{"pass_ns": "-1"}, "pass_ns", true},
		{"nan cost", highRes(1), map[string]string{"expiry_ns": "NaN"}, "expiry_ns", true},
		{"no cpus", sdk.Setup{CPUs: 0, HZ: 1000, HighRes: true}, nil, "", true},
		{"bad hz", sdk.Setup{CPUs: 1, HZ: 123, HighRes: true}, nil, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := sdk.Config{}
			for _, a := range schema().Attributes {
				c[a.Name] = a.Default
			}
			for k, v := range tc.over {
				c[k] = v
			}
			p := New()
			d := p.Configure(tc.setup, c)
			if d.HasErrors() != tc.wantErr {
				t.Fatalf("Configure(%+v, %v) = %v, want errors %v", tc.setup, tc.over, d, tc.wantErr)
			}
			if tc.wantErr && d[0].Attribute != tc.wantAttr {
				t.Errorf("Configure(%v) error attribute = %q, want %q", tc.over, d[0].Attribute, tc.wantAttr)
			}
		})
	}
	p := configure(t, highRes(1), map[string]string{"start_ns": "150.6"})
	if p.cfg.Costs.Start != 151 {
		t.Errorf("start_ns 150.6 decoded to %d, want 151 (rounded)", p.cfg.Costs.Start)
	}
}

// TestCountersStableOrder checks the order and content of Counters.
func TestCountersStableOrder(t *testing.T) {
	r := newRig(t, configure(t, highRes(2), nil))
	r.start(0, 0, hard(1), at(1*ms), 0)
	r.start(1, 0, sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeSoft}, at(1*ms), 0)
	r.cancel(0, 0, 3)
	r.advance(at(2 * ms))
	c1, c2 := r.p.Counters(), r.p.Counters()
	if !slices.Equal(c1, c2) {
		t.Fatalf("Counters() differs between calls")
	}
	if len(c1) != 2*len(counterNames) {
		t.Fatalf("len(Counters()) = %d, want %d", len(c1), 2*len(counterNames))
	}
	get := func(cpu int, name string) int64 {
		for _, c := range c1 {
			if c.CPU == cpu && c.Name == name {
				return c.Value
			}
		}
		t.Fatalf("counter %s cpu%d missing", name, cpu)
		return 0
	}
	for i, c := range c1 {
		if want := counterNames[i%len(counterNames)]; c.Name != want || c.CPU != i/len(counterNames) {
			t.Errorf("Counters()[%d] = %s/cpu%d, want %s/cpu%d", i, c.Name, c.CPU, want, i/len(counterNames))
		}
	}
	checks := []struct {
		cpu  int
		name string
		want int64
	}{
		{0, "starts", 1}, {0, "expiries_hard", 1}, {0, "nr_events", 1}, {0, "cancels", 0},
		{1, "expiries_soft", 1}, {1, "softirq_raises", 1}, {1, "nr_events", 1},
		{0, "device_writes", int64(r.writes[0])}, {1, "device_writes", int64(r.writes[1])},
	}
	for _, ck := range checks {
		if got := get(ck.cpu, ck.name); got != ck.want {
			t.Errorf("counter %s cpu%d = %d, want %d", ck.name, ck.cpu, got, ck.want)
		}
	}
}

// TestConfigMissing: every attribute of the schema must be set (the host
// fills in defaults): a missing one is an error on it, not a silent default.
func TestConfigMissing(t *testing.T) {
	for _, missing := range []string{"hang_delay", "restart", "start_ns"} {
		c := sdk.Config{}
		for _, a := range schema().Attributes {
			if a.Name != missing {
				c[a.Name] = a.Default
			}
		}
		_, d := decodeConfig(c)
		if !d.HasErrors() || d[0].Attribute != missing {
			t.Errorf("decodeConfig without %s = %v, want an error on %s", missing, d, missing)
		}
	}
}
