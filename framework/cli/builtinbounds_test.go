package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBuiltinConfigBounds: the builtins run in process without the contract
// checker (sdk.Factory.Vetted), so a value of their config that would make
// an answer break the contract (a cost past framework/contract's MaxCost, a
// device frequency past MaxFreqHz, more comparators than it allows) is
// refused when the file is decoded: exit 2, naming the file, the line and
// the attribute, before any plugin runs.
func TestBuiltinConfigBounds(t *testing.T) {
	for _, tc := range []struct {
		name, block, attr, want string
	}{
		{"hrtimer cost", "hrtimer {\n  plugin = \"hrtimer\"\n  start_ns = 1e12\n}", "start_ns", "the most allowed"},
		{"hrtimer negative cost", "hrtimer {\n  plugin = \"hrtimer\"\n  expiry_ns = -1\n}", "expiry_ns", "the least allowed"},
		{"wheel cost", "wheel {\n  plugin = \"wheel\"\n  iteration_cost_ns = 1e9\n}", "iteration_cost_ns", "the most allowed"},
		{"lapic write cost", "clockevent \"local\" {\n  plugin = \"lapic\"\n  deadline_write_cost = \"11s\"\n}", "deadline_write_cost", "the most allowed"},
		{"lapic irq latency", "clockevent \"local\" {\n  plugin = \"lapic\"\n  irq_latency = \"2ms\"\n}", "irq_latency", "the most allowed"},
		{"lapic bus frequency", "clockevent \"local\" {\n  plugin = \"lapic\"\n  mode = \"oneshot\"\n  bus_freq = \"2000GHz\"\n}", "bus_freq", "the most allowed"},
		{"lapic eoi spread", "clockevent \"local\" {\n  plugin = \"lapic\"\n  eoi_cost_spread = \"p50=0 p99=+20s\"\n}", "eoi_cost_spread", "the most an EOI may cost"},
		{"hpet comparators", "clockevent \"broadcast\" {\n  plugin = \"hpet\"\n  channels = 300\n}", "channels", "from 0 to 32"},
		{"hpet smi", "clockevent \"broadcast\" {\n  plugin = \"hpet\"\n  smi_duration = \"20s\"\n}", "smi_duration", "the most allowed"},
		{"hpet smi rate", "clockevent \"broadcast\" {\n  plugin = \"hpet\"\n  smi_rate = 1e6\n}", "smi_rate", "the most allowed"},
		{"governor select cost", "governor {\n  plugin = \"menu\"\n  select_cost = \"1h\"\n}", "select_cost", "the most allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "machine {\n  cpus = 2\n}\n" + tc.block + "\nrun {\n  duration = \"1ms\"\n}\n"
			line := 0
			for i, l := range strings.Split(src, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), tc.attr+" ") {
					line = i + 1
				}
			}
			cfg := filepath.Join(t.TempDir(), "bounds.hcl")
			if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := New().Run([]string{"validate", cfg}, &stdout, &stderr)
			msg := stderr.String()
			where := "bounds.hcl line " + strconv.Itoa(line)
			if code != 2 || !strings.Contains(msg, where) || !strings.Contains(msg, `"`+tc.attr+`"`) && !strings.Contains(msg, tc.attr+":") || !strings.Contains(msg, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming %s, %q and %q", code, msg, where, tc.attr, tc.want)
			}
		})
	}
}
