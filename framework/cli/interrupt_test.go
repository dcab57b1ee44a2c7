//go:build linux

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pluginsOf returns the plugin processes the host with pid runs.
func pluginsOf(host int) map[int]string {
	out := map[int]string{}
	for _, pid := range processes(func(_, ppid, _ int) bool { return ppid == host }) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if c := strings.ReplaceAll(string(cmdline), "\x00", " "); strings.Contains(c, "plugin serve") {
			out[pid] = c
		}
	}
	return out
}

// TestCompareSignalWritesFinishedRuns: SIGINT or SIGTERM in the middle of an
// out-of-process comparison, after its first run has finished, kills every
// plugin process (the one signal path), writes the comparison with the
// finished runs and the others marked not finished, and exits 128+signal.
func TestCompareSignalWritesFinishedRuns(t *testing.T) {
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}
	if testing.Short() {
		sigs = sigs[:1] // one path for both: one is enough for a quick check
	}
	for _, sig := range sigs {
		t.Run(sig.String(), func(t *testing.T) {
			host := exec.Command(os.Args[0], "compare", nohzCatchup, "--variants", "per_jiffy,next_expiry", "--seeds", "20",
				"--jobs", "1", "--isolation", "process", "--format", "json")
			host.Env = append(os.Environ(), hostEnv+"=1")
			var stdout, stderr bytes.Buffer
			host.Stdout, host.Stderr = &stdout, &stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = host.Process.Kill()
				_, _ = host.Process.Wait()
			})
			// The first run's plugins, then a plugin of the second run:
			// the first run has finished.
			seen := map[int]string{}
			deadline := time.Now().Add(60 * time.Second)
			for {
				now := pluginsOf(host.Process.Pid)
				newRun := false
				for pid, c := range now {
					if len(seen) >= 3 {
						if _, old := seen[pid]; !old {
							newRun = true
						}
					}
					if len(seen) < 3 {
						seen[pid] = c
					}
				}
				if newRun {
					for pid, c := range now {
						seen[pid] = c
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no second run's plugins after 60s (seen %v); stderr:\n%s", seen, stderr.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := host.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitHost(t, host, 30*time.Second, &stderr); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(sig), stderr.String())
			}
			var doc struct {
				Failures []struct {
					Variant, Error string
					Seed           uint64
				} `json:"failures"`
				Interrupted int `json:"interrupted"`
				Metrics     []json.RawMessage
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not the comparison's JSON: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if doc.Interrupted < 1 || doc.Interrupted >= 40 || len(doc.Metrics) == 0 {
				t.Errorf("interrupted = %d of 40, %d metrics; want some runs finished (with metrics) and the rest marked", doc.Interrupted, len(doc.Metrics))
			}
			for _, f := range doc.Failures {
				if f.Error != "not finished: tickemu was interrupted" {
					t.Errorf("failure %s/%d: %q, want it marked not finished", f.Variant, f.Seed, f.Error)
				}
			}
			for _, want := range []string{"stopping; the runs that finished are written", "compare interrupted by"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
				}
			}
			checkNoneLeft(t, seen)
		})
	}
}
