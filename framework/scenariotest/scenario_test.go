package scenariotest_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/scenariotest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// TestRunScenario runs a shipped scenario in process and through the gRPC
// pair: the same bytes, and the accessors find what the run reports.
func TestRunScenario(t *testing.T) {
	file := filepath.Join("..", "..", "configs", "devices.hcl")
	seed := uint64(2)
	o := scenariotest.ScenarioOptions{Variant: "hpet_only", Seed: &seed}
	in := scenariotest.RunScenarioWith(t, file, o, builtin.Factories()...)
	o.Isolation = sdk.IsolationProcess
	wire := scenariotest.RunScenarioWith(t, file, o, builtin.Factories()...)
	if !bytes.Equal(in.JSON, wire.JSON) {
		t.Errorf("JSON differs in process (%d bytes) and over gRPC (%d bytes)", len(in.JSON), len(wire.JSON))
	}
	if !bytes.Contains(in.JSON, []byte(`"seed": 2`)) || !strings.Contains(string(in.Text), "T: 0") {
		t.Errorf("result does not look like seed 2 of devices.hcl:\n%s", in.Text)
	}
	if got := in.Plugin("clockevent/local"); !strings.HasPrefix(got, "hpet ") {
		t.Errorf("Plugin(clockevent/local) = %q, want the hpet", got)
	}
	if in.Counter("kernel", "hrtimer_interrupts") == 0 {
		t.Error("Counter(kernel, hrtimer_interrupts) = 0")
	}
	if v, ok := in.Metric("Cyclictest", "thread=0", "max-latency-ns"); !ok || v <= 0 {
		t.Errorf("Metric(Cyclictest, thread=0, max-latency-ns) = %v, %v", v, ok)
	}
	if _, ok := in.Metric("Cyclictest", "thread=0", "no-such-unit"); ok {
		t.Error("Metric found a unit that does not exist")
	}
}

// TestRunScenarioErrors: a configuration error fails the test with the
// diagnostics, and so do two factories for one plugin.
func TestRunScenarioErrors(t *testing.T) {
	file := filepath.Join("..", "..", "configs", "devices.hcl")
	tests := []struct {
		name string
		run  func(tb testing.TB)
		want string
	}{
		{"unknown variant", func(tb testing.TB) { scenariotest.RunScenario(tb, file, "nosuch", builtin.Factories()...) }, "nosuch"},
		{"missing plugin", func(tb testing.TB) { scenariotest.RunScenario(tb, file, "hpet_only", builtin.Factories()[:1]...) }, "hrtimer"},
		{"duplicate factory", func(tb testing.TB) {
			scenariotest.RunScenario(tb, file, "", append(builtin.Factories(), builtin.Factories()[0])...)
		}, "two factories"},
	}
	for _, tt := range tests {
		ft := &fatalT{TB: t}
		func() {
			defer func() { _ = recover() }()
			tt.run(ft)
		}()
		if !strings.Contains(ft.msg, tt.want) {
			t.Errorf("%s: fatal message %q does not mention %q", tt.name, ft.msg, tt.want)
		}
	}
}

// fatalT records Fatalf instead of ending the test.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}
func (f *fatalT) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f)
}
