// Command tracebundle packs a tracefs trace recorded by
// scripts/calibrate-trace.sh into a capture bundle (framework/bundle) with
// this machine's facts, for the calibrate tests' bundle
// (cmd/tickemu/testdata/calibrate/kvm-cyclictest.tcap) until `tickemu
// capture` records bundles itself:
//
//	go run ./internal/tracebundle -trace T -stdout S -o OUT.tcap -note TEXT -- COMMAND...
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tickemu/tickemu/framework/bundle"
)

func main() {
	trace := flag.String("trace", "", "the tracefs trace text")
	stdout := flag.String("stdout", "", "the command's output")
	out := flag.String("o", "", "the bundle to write")
	note := flag.String("note", "", "provenance")
	clock := flag.String("clock", "local", "the trace clock used")
	start := flag.String("start", "", "when the command started (RFC 3339; default: the trace file's time)")
	flag.Parse()
	if *trace == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: tracebundle -trace T -o OUT.tcap [-stdout S] [-note TEXT] -- COMMAND...")
		os.Exit(2)
	}
	st, err := os.Stat(*trace)
	if err != nil {
		fatal(err)
	}
	m := &bundle.Manifest{Tool: "tracebundle", Name: strings.TrimSuffix(filepath.Base(*out), bundle.Ext), Note: *note,
		Command: flag.Args(), Start: st.ModTime().UTC().Truncate(time.Second), Host: host(),
		Trace: bundle.TraceInfo{Clock: *clock, Events: events()}}
	if *start != "" {
		if m.Start, err = time.Parse(time.RFC3339, *start); err != nil {
			fatal(err)
		}
	}
	entries := []bundle.Entry{{Name: bundle.TraceName, Path: *trace}}
	if *stdout != "" {
		entries = append(entries, bundle.Entry{Name: bundle.StdoutName, Path: *stdout})
	}
	if err := bundle.Write(*out, m, entries); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "tracebundle:", err)
	os.Exit(1)
}

// events are the ones scripts/calibrate-trace.sh enables.
func events() []string {
	return []string{"timer/*", "irq/*", "irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit", "sched/sched_switch",
		"sched/sched_waking", "sched/sched_wakeup", "power/cpu_idle", "signal/signal_generate", "signal/signal_deliver", "msr/write_msr",
		"ipi/ipi_send_cpu", "irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit",
		"irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit"}
}

func read(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func host() bundle.Host {
	var h bundle.Host
	un := func(a string) string { b, _ := exec.Command("uname", a).Output(); return strings.TrimSpace(string(b)) }
	h.Release, h.Version, h.Machine = un("-r"), un("-v"), un("-m")
	for _, l := range strings.Split(read("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			h.CPUModel = strings.TrimSpace(v)
			break
		}
	}
	if strings.Contains(read("/proc/cpuinfo"), " hypervisor") {
		h.Hypervisor = "KVM"
	}
	h.Online = read("/sys/devices/system/cpu/online")
	for _, l := range strings.Split(read("/proc/cpuinfo"), "\n") {
		if strings.HasPrefix(l, "processor") {
			h.CPUs++
		}
	}
	h.Clocksource = read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	for _, l := range strings.Split(read("/proc/timer_list"), "\n") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(l), "Clock Event Device: "); ok && d != "<NULL>" && h.Clockevents == nil {
			h.Clockevents = append(h.Clockevents, d)
		}
	}
	h.Config = map[string]string{}
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if zr, err := gzip.NewReader(f); err == nil {
			sc := bufio.NewScanner(zr)
			for sc.Scan() {
				k, v, ok := strings.Cut(sc.Text(), "=")
				switch {
				case ok && k == "CONFIG_HZ":
					h.HZ, _ = strconv.Atoi(v)
					h.Config[k] = v
				case ok && (k == "CONFIG_NO_HZ_IDLE" || k == "CONFIG_NO_HZ_FULL" || k == "CONFIG_HIGH_RES_TIMERS"):
					h.Config[k] = v
				}
			}
			h.ConfigSource = "/proc/config.gz"
		}
	}
	h.HighRes = h.Config["CONFIG_HIGH_RES_TIMERS"] == "y"
	switch {
	case h.Config["CONFIG_NO_HZ_FULL"] == "y":
		h.NoHZ = "full"
	case h.Config["CONFIG_NO_HZ_IDLE"] == "y":
		h.NoHZ = "idle"
	default:
		h.NoHZ = "off"
	}
	h.CPUIdle.Driver = read("/sys/devices/system/cpu/cpuidle/current_driver")
	h.CPUIdle.Governor = read("/sys/devices/system/cpu/cpuidle/current_governor_ro")
	return h
}
