package replayrun_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/replayrun"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// TestBundle replays a capture bundle (a cyclictest run on a 2-CPU 6.18
// KVM guest with the haltpoll cpuidle driver and governor, HZ 250): the
// trace is read from the bundle, and the machine is its host's (2 CPUs, HZ
// 250, the haltpoll governor), holding the PM QoS request the host held.
// A plain trace is not a bundle.
func TestBundle(t *testing.T) {
	path, err := filepath.Abs("../../cmd/tickemu/testdata/calibrate/kvm-cyclictest.tcap")
	if err != nil {
		t.Fatal(err)
	}
	src, notes, qos, ok, err := replayrun.BundleMachine(path)
	if err != nil || !ok {
		t.Fatalf("BundleMachine: ok %v, %v", ok, err)
	}
	if qos != 0 || !strings.Contains(strings.Join(notes, "\n"), "the replay holds it") {
		t.Errorf("PM QoS %d ns, notes %q: want the host's request of 0 held", qos, notes)
	}
	cp, err := workload.ScanCapture(path)
	if err != nil {
		t.Fatal(err)
	}
	rsrc, name, err := replayrun.ConfigSrc(src, "host", path, cp, qos)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := config.LoadBytes(name, rsrc, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out, err := replayrun.Run(path, cp, spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Result.Config; c.CPUs != 2 || c.HZ != 250 {
		t.Errorf("model %d CPUs, HZ %d: want the host's 2 and 250", c.CPUs, c.HZ)
	}
	gov := ""
	for _, p := range out.Result.Plugins {
		if p.Kind == "governor" {
			gov = p.Name
		}
	}
	if gov != "haltpoll" {
		t.Errorf("governor %q, want the host's haltpoll", gov)
	}
	if f := out.CaptureScore.Funcs["hrtimer_wakeup"]; f == nil || f.Starts < 1000 {
		t.Errorf("the bundle's trace was not read: %+v", f)
	}
	if _, _, _, ok, err := replayrun.BundleMachine("../workload/testdata/replay-small.txt"); ok || err != nil {
		t.Errorf("a plain trace: ok %v, %v", ok, err)
	}
}
