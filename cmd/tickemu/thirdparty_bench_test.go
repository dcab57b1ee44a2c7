package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/custombuild"
)

// customBinary builds tickemu with the example plugin module linked in
// (`tickemu build --with github.com/tickemu/tickemu/examples/fixed=DIR`),
// from this checkout, into dir.
func customBinary(tb testing.TB, dir string) (bin, root string) {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	root = filepath.Join(filepath.Dir(file), "..", "..")
	t, ok := custombuild.ThisTickemu()
	if !ok {
		tb.Fatal("this test binary does not know its checkout")
	}
	bin = filepath.Join(dir, "tickemu-fixed")
	o := custombuild.Options{
		Plugins: []custombuild.Plugin{{Module: "github.com/tickemu/tickemu/examples/fixed", Dir: filepath.Join(root, "examples", "fixed")}},
		Tickemu: t, Output: bin, Env: append(os.Environ(), "GOPROXY=off"),
	}
	if _, err := custombuild.Build(context.Background(), o); err != nil {
		tb.Fatalf("tickemu build: %v", err)
	}
	return bin, root
}

// BenchmarkThirdPartyPlugin times whole runs of a custom build on the shipped
// configs/nohz-catchup.hcl, side by side in one loop:
//
//	linked:   the local clock event device is the example's "fixed", linked
//	          in process (--var local_clockevent=fixed), against the builtin
//	          lapic in the same binary; linked/builtin is the wall-time ratio.
//	process:  the same plugin in its own process (local_isolation=process,
//	          the binary re-executing itself), against it linked in, on a 1 s
//	          measured span (--var duration=1s) to keep the run short;
//	          process/linked is the ratio.
func BenchmarkThirdPartyPlugin(b *testing.B) {
	bin, root := customBinary(b, b.TempDir())
	cfg := filepath.Join(root, "configs", "nohz-catchup.hcl")
	// run returns the wall time of one run and the CPU time of its process
	// (less disturbed by other load on a shared machine; a plugin process's
	// own CPU time is not in it).
	run := func(b *testing.B, args ...string) (wall, cpu time.Duration) {
		cmd := exec.Command(bin, append([]string{"run", cfg, "--format", "bench"}, args...)...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	pair := func(b *testing.B, baseArgs, otherArgs []string, baseUnit, otherUnit, ratioUnit string) {
		var base, other, baseCPU, otherCPU time.Duration
		add := func(wall, cpu *time.Duration, args []string) {
			w, c := run(b, args...)
			*wall += w
			*cpu += c
		}
		n := 0
		for b.Loop() {
			// Alternate the order so neither side always runs on a warm cache.
			if n%2 == 0 {
				add(&base, &baseCPU, baseArgs)
				add(&other, &otherCPU, otherArgs)
			} else {
				add(&other, &otherCPU, otherArgs)
				add(&base, &baseCPU, baseArgs)
			}
			n++
		}
		b.ReportMetric(base.Seconds()/float64(n), baseUnit)
		b.ReportMetric(other.Seconds()/float64(n), otherUnit)
		b.ReportMetric(other.Seconds()/base.Seconds(), ratioUnit)
		b.ReportMetric(otherCPU.Seconds()/baseCPU.Seconds(), ratioUnit+"-cpu")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("linked", func(b *testing.B) {
		pair(b, []string{"--var", "local_clockevent=lapic"}, []string{"--var", "local_clockevent=fixed"},
			"builtin-sec/run", "linked-sec/run", "linked/builtin")
	})
	b.Run("process", func(b *testing.B) {
		short := []string{"--var", "local_clockevent=fixed", "--var", "duration=1s"}
		pair(b, short, append(short, "--var", "local_isolation=process"),
			"linked-sec/run", "process-sec/run", "process/linked")
	})
}
