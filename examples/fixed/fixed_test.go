package fixed_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/examples/fixed"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// config is the plugin's config in the host's canonical form: durations in
// ns, frequencies in Hz.
func config(over map[string]string) sdk.Config {
	c := sdk.Config{"freq": "1e+09", "write_cost": "100", "latency": "0", "per_cpu": "true", "rating": "100"}
	for k, v := range over {
		c[k] = v
	}
	return c
}

func configured(t *testing.T, over map[string]string) *fixed.Device {
	t.Helper()
	d := fixed.New()
	if diags := d.Configure(sdk.Setup{CPUs: 4, HZ: 1000, HighRes: true}, config(over)); diags.HasErrors() {
		t.Fatalf("Configure(%v) = %v", over, diags)
	}
	return d
}

func TestConformance(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) {
		sdktest.RunClockEventDevice(t, func(t *testing.T, role sdk.Role) sdk.ClockEventDevice { return fixed.New() })
	})
	t.Run("grpc", func(t *testing.T) {
		sdktest.RunClockEventDevice(t, func(t *testing.T, role sdk.Role) sdk.ClockEventDevice {
			return sdktest.GRPCPair(t, fixed.Factory).(sdk.ClockEventDevice)
		})
	})
}

// TestSetNextEvent: lapic_next_deadline() writes counter-at-entry + delta, so
// the interrupt comes ticks/freq after the call plus the latency, and the
// write costs write_cost.
func TestSetNextEvent(t *testing.T) {
	tests := []struct {
		name  string
		over  map[string]string
		now   ktime.Time
		ticks uint64
		want  sdk.ProgramResult
	}{
		{"1GHz: a tick is a ns", nil, 1000, 500, sdk.ProgramResult{FireAt: 1500, Cost: 100}},
		{"latency added", map[string]string{"latency": "700"}, 1000, 500, sdk.ProgramResult{FireAt: 2200, Cost: 100}},
		{"3GHz rounds up", map[string]string{"freq": "3e+09", "write_cost": "40"}, 0, 4, sdk.ProgramResult{FireAt: 2, Cost: 40}},
		{"HPET rate", map[string]string{"freq": "1.431818e+07"}, 0, 14318, sdk.ProgramResult{FireAt: 999988, Cost: 100}},
		{"far deadline saturates", nil, 5, 1 << 63, sdk.ProgramResult{FireAt: ktime.Max, Cost: 100}},
	}
	for _, tt := range tests {
		d := configured(t, tt.over)
		if got := d.SetNextEvent(1, tt.now, tt.ticks); got != tt.want {
			t.Errorf("%s: SetNextEvent(1, %v, %d) = %+v, want %+v", tt.name, tt.now, tt.ticks, got, tt.want)
		}
	}
}

func TestPeriodic(t *testing.T) {
	d := configured(t, map[string]string{"latency": "10"})
	cost, first := d.SetState(0, 1000, sdk.StatePeriodic, 4000)
	if cost != 100 || first != 5010 {
		t.Fatalf("SetState(periodic, 4000) at 1000 = %d, %v, want 100, 5010", cost, first)
	}
	// Ticks stay on the 1000 + k*4000 grid however late the handler acks.
	acks := []struct{ now, want ktime.Time }{{5010, 9010}, {9500, 13010}, {21000, 25010}}
	for _, a := range acks {
		if _, next := d.Ack(0, a.now); next != a.want {
			t.Errorf("Ack(0, %v) next = %v, want %v", a.now, next, a.want)
		}
	}
	if _, first := d.SetState(0, 30000, sdk.StateShutdown, 0); first != ktime.Max {
		t.Errorf("SetState(shutdown) first fire = %v, want max", first)
	}
	if _, next := d.Ack(0, 30001); next != ktime.Max {
		t.Errorf("Ack after shutdown next = %v, want max", next)
	}
}

func TestSpecAndCounters(t *testing.T) {
	tests := []struct {
		over         map[string]string
		channels     int
		perCPU       bool
		wantFeatures sdk.DeviceFeatures
	}{
		{nil, 4, true, sdk.FeatOneshot | sdk.FeatPeriodic | sdk.FeatPerCPU},
		{map[string]string{"per_cpu": "false"}, 1, false, sdk.FeatOneshot | sdk.FeatPeriodic},
	}
	for _, tt := range tests {
		d := configured(t, tt.over)
		s := d.Spec()
		if s.Channels != tt.channels || s.Features != tt.wantFeatures || s.FreqHz != 1e9 || s.MinDeltaTicks != 0xF {
			t.Errorf("Spec() with %v = %+v, want %d channels, features %b", tt.over, s, tt.channels, tt.wantFeatures)
		}
	}
	d := configured(t, nil)
	d.SetNextEvent(0, 0, 10)
	d.SetNextEvent(1, 0, 10)
	d.SetState(2, 0, sdk.StateOneshot, 0)
	d.Ack(0, 10)
	want := []sdk.Counter{{Name: "writes", CPU: -1, Value: 2}, {Name: "acks", CPU: -1, Value: 1}, {Name: "state_changes", CPU: -1, Value: 1}}
	if got := d.Counters(); !reflect.DeepEqual(got, want) {
		t.Errorf("Counters() = %v, want %v", got, want)
	}
}

func TestConfigureRejects(t *testing.T) {
	tests := []struct {
		over map[string]string
		attr string
	}{
		{map[string]string{"freq": "0"}, "freq"},
		{map[string]string{"write_cost": "-1"}, "write_cost"},
		{map[string]string{"latency": "-5"}, "latency"},
	}
	for _, tt := range tests {
		d := fixed.New()
		diags := d.Configure(sdk.Setup{CPUs: 2}, config(tt.over))
		if !diags.HasErrors() || diags[0].Attribute != tt.attr {
			t.Errorf("Configure(%v) = %v, want an error on %q", tt.over, diags, tt.attr)
		}
	}
}

func TestChannelOutOfRange(t *testing.T) {
	d := configured(t, nil)
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !strings.Contains(err.Error(), "channel 4 out of range [0, 4)") {
			t.Errorf("SetNextEvent(4, ...) panicked with %v, want channel 4 out of range", r)
		}
	}()
	d.SetNextEvent(4, 0, 1)
}

// TestFixedDeclaresNoModel: the device's deadline is now + ticks exactly,
// which no sdk.DeadlineModel (a counter read plus ticks × scale) describes;
// README.md and docs/plugins.md say it does not implement
// sdk.DeadlineDevice, and this test fails if it starts to, so they are
// updated with it.
func TestFixedDeclaresNoModel(t *testing.T) {
	var p sdk.Plugin = fixed.New()
	if _, ok := p.(sdk.DeadlineDevice); ok {
		t.Error("fixed implements sdk.DeadlineDevice: README.md and docs/plugins.md say it does not")
	}
	if _, ok := p.(sdk.LoggerSetter); !ok {
		t.Error("fixed does not implement sdk.LoggerSetter, which docs/plugins.md says a plugin logs through")
	}
}
