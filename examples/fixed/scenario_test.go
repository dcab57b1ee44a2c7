package fixed_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/examples/fixed"
	"github.com/tickemu/tickemu/framework/scenariotest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// factories are what `tickemu build --with` links: the builtins and ours.
var factories = slices.Concat(builtin.Factories(), fixed.Factories())

// TestScenario runs scenario.hcl with the device linked in process (as in a
// custom build, and under dlv test), then through tickemu's gRPC transport:
// the same bytes. The device did the programming the kernel counted.
func TestScenario(t *testing.T) {
	in := scenariotest.RunScenario(t, "scenario.hcl", "fixed", factories...)
	if got := in.Plugin("clockevent/local"); got != "fixed "+fixed.Version {
		t.Fatalf("clockevent/local is served by %q, want fixed %s", got, fixed.Version)
	}
	writes := in.Counter("clockevent/local", "writes")
	if writes == 0 || writes != in.Counter("kernel", "device_writes") {
		t.Errorf("fixed counted %d writes, the kernel %d device writes", writes, in.Counter("kernel", "device_writes"))
	}
	wire := scenariotest.RunScenarioWith(t, "scenario.hcl", scenariotest.ScenarioOptions{Variant: "fixed", Isolation: sdk.IsolationProcess}, factories...)
	if !bytes.Equal(in.JSON, wire.JSON) {
		t.Errorf("results differ linked in (%d bytes) and over gRPC (%d bytes)", len(in.JSON), len(wire.JSON))
	}
}

// TestAgainstLAPIC: fixed models an ideal TSC-deadline LAPIC, so cyclictest
// on it sees latencies within a few microseconds of the builtin's.
func TestAgainstLAPIC(t *testing.T) {
	fx := scenariotest.RunScenario(t, "scenario.hcl", "fixed", factories...)
	lapic := scenariotest.RunScenario(t, "scenario.hcl", "lapic", factories...)
	for _, sub := range []string{"thread=0", "thread=1"} {
		mine, ok1 := fx.Metric("Cyclictest", sub, "max-latency-ns")
		base, ok2 := lapic.Metric("Cyclictest", sub, "max-latency-ns")
		if !ok1 || !ok2 {
			t.Fatalf("no Cyclictest/%s max-latency-ns", sub)
		}
		if d := mine - base; d > 5000 || d < -5000 {
			t.Errorf("Cyclictest/%s max latency: fixed %v ns, lapic %v ns: more than 5 us apart", sub, mine, base)
		}
	}
}
