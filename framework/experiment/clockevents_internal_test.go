package experiment

import (
	"fmt"
	"testing"

	"github.com/tickemu/tickemu/framework/clockevents"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
)

// TestClockeventsOptions: the kernel block's min-delta variant and
// starvation guard (a kernel version sets the guard from 7.0) reach the
// clockevents core's options.
func TestClockeventsOptions(t *testing.T) {
	src := "machine {\n  hz = 250\n}\nkernel {\n  version = %q\n  clockevents_min_delta = %q\n}\nrun {\n  duration = \"1ms\"\n}\n"
	for _, c := range []struct {
		version, minDelta string
		want              clockevents.Options
	}{
		{"6.19", "min_adjust", clockevents.Options{HZ: 250, MinDelta: clockevents.MinAdjust}},
		{"7.0", "retry10", clockevents.Options{HZ: 250, MinDelta: clockevents.RetryTenfold, StarvationGuard: true}},
		{"4.14", "once", clockevents.Options{HZ: 250, MinDelta: clockevents.RetryOnce}},
	} {
		spec, diags := config.LoadBytes("k.hcl", []byte(fmt.Sprintf(src, c.version, c.minDelta)), config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		kcfg, diags := spec.DecodeKernel(kernel.KernelSchema())
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		ks, err := kernel.ParseKernelSettings(kcfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := clockeventsOptions(spec, ks); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.version, c.minDelta, got, c.want)
		}
	}
}
