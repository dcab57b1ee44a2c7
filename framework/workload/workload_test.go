package workload_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestTypesDecodeWithDefaults: every workload type's schema decodes an empty
// block (its defaults are valid) and its constructor accepts the result.
func TestTypesDecodeWithDefaults(t *testing.T) {
	m := kernel.Machine{CPUs: 4, HZ: 1000}
	for _, ty := range workload.Types() {
		cfg, diags := config.DecodeBody(hcl.EmptyBody(), nil, ty.Schema, "workload "+ty.Name)
		if diags.HasErrors() {
			t.Errorf("%s: defaults do not decode: %v", ty.Name, diags)
			continue
		}
		rd := cfg.Reader()
		// hrtimer_load's defaults are periodic; replay's capture is required.
		if _, err := ty.New("x", rd, m); err != nil && !strings.Contains(err.Error(), "one-shot") && !strings.Contains(err.Error(), "capture") {
			t.Errorf("%s: New with defaults: %v", ty.Name, err)
		}
		if d := rd.Diagnostics(); d.HasErrors() {
			t.Errorf("%s: the decoded defaults do not read back: %v", ty.Name, d)
		}
		for _, a := range ty.Schema.Attributes {
			if a.Doc == "" {
				t.Errorf("%s: attribute %q has no Doc", ty.Name, a.Name)
			}
		}
	}
}

// TestCyclictestOutput: the summary uses cyclictest's own line format, and
// -h adds its histogram block.
func TestCyclictestOutput(t *testing.T) {
	r := simtest.Run(t, `
machine {
  cpus = 2
}
workload "cyclictest" "c" {
  threads   = 2
  priority  = 80
  histogram = 50
}
run {
  duration = "30ms"
}`, config.Options{}, nil)
	text := strings.Join(r.Workloads[0].Text, "\n")
	line := regexp.MustCompile(`(?m)^T: 1 \( *\d+\) P:80 I:1000 C: +\d+ Min: +\d+ Act: +\d+ Avg: +\d+ Max: +\d+$`)
	if !line.MatchString(text) {
		t.Errorf("no cyclictest line for thread 1 in:\n%s", text)
	}
	for _, want := range []string{"# Histogram", "# Total:", "# Max Latencies:", "# Histogram Overflows:"} {
		if !strings.Contains(text, want) {
			t.Errorf("histogram output lacks %q:\n%s", want, text)
		}
	}
}
