package workload_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestReplayKernelThreads: a task the bundle names a kernel thread
// (bundle.json's kernel_threads, PF_KTHREAD at capture time) runs its
// replayed time as kernel work, which the model charges to system, as the
// kernel does (account_process_tick(): a kernel thread is never in user
// mode); the same capture as a plain trace, or a bundle without the list,
// runs it as user computation. The task time is the same either way.
func TestReplayKernelThreads(t *testing.T) {
	trace := twoSleepers(t, 10)
	dir := t.TempDir()
	mk := func(name string, kthreads []int) string {
		p := filepath.Join(dir, name)
		m := &bundle.Manifest{Tool: "test", Command: []string{"app"}, KernelThreads: kthreads}
		if err := bundle.Write(p, m, []bundle.Entry{{Name: bundle.TraceName, Path: trace}}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(path string) (user, system int64, text string) {
		r := simtest.Run(t, fmt.Sprintf(`
machine {
  cpus = 2
}
run {
  duration = "12ms"
}
workload "replay" "w" {
  capture = %q
}`, path), config.Options{}, nil)
		for _, c := range r.Kernel.CPUs {
			user += c.UserNS
			system += c.SystemNS
		}
		return user, system, strings.Join(r.Workloads[0].Text, "\n")
	}
	uPlain, sPlain, _ := run(trace)
	uNone, sNone, _ := run(mk("none.tcap", nil))
	uK, sK, text := run(mk("kthread.tcap", []int{600}))
	if uNone != uPlain || sNone != sPlain {
		t.Errorf("a bundle without kernel_threads: user %d, system %d; the plain trace %d, %d", uNone, sNone, uPlain, sPlain)
	}
	moved := uPlain - uK
	if moved <= 0 || sK-sPlain != moved {
		t.Errorf("bg (pid 600) as a kernel thread: user %d -> %d, system %d -> %d; want its run time moved from user to system", uPlain, uK, sPlain, sK)
	}
	if !strings.Contains(text, "kernel threads (bundle.json's kernel_threads) 1: their run time is kernel work, system time") {
		t.Errorf("report:\n%s", text)
	}
}
