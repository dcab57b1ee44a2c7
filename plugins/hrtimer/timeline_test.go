package hrtimer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestTimelines runs the data-driven timelines in testdata/timeline: each
// file is a sequence of host operations on the plugin and, after each, what
// the plugin answered. `go test -run TestTimelines -rewrite` rewrites the
// expected output from what the code does now (review the diff!).
//
// Commands (times are durations after boot: 10ms, 1005us, 42ns; "max" is
// KTIME_MAX):
//
//	new [eras=(E-5.10,...)] [cpus=N] [zero-costs]
//	    a fresh plugin per era (default: every era of the eras table), high
//	    resolution, HZ 1000. Every later command runs on each era's plugin; an
//	    output that differs between eras is printed per group of eras.
//	start [cpu=C] id=N at=T [now=T] [callback=T]
//	    hrtimer_start_range_ns() of a hard ABS CLOCK_MONOTONIC timer (callback:
//	    its callback's cost); prints the device writes and the return value.
//	cancel [cpu=C] id=N [now=T]
//	    hrtimer_try_to_cancel(); prints the device writes and -1/0/1.
//	interrupt [cpu=C] now=T
//	    hrtimer_interrupt(); prints the expired timers and the device writes.
//	state [cpu=C]
//	    expires_next and the next event the host would ask for.
func TestTimelines(t *testing.T) {
	datadriven.Walk(t, "testdata/timeline", func(t *testing.T, path string) {
		var plugins []*Plugin
		var names []string
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				plugins, names = newTimeline(t, d)
				return ""
			}
			if plugins == nil {
				d.Fatalf(t, "%s before new", d.Cmd)
			}
			outs := make([]string, len(plugins))
			for i, p := range plugins {
				outs[i] = timelineStep(t, d, p)
			}
			return groupByEra(names, outs)
		})
	})
}

func newTimeline(t *testing.T, d *datadriven.TestData) ([]*Plugin, []string) {
	cpus := 1
	d.MaybeScanArgs(t, "cpus", &cpus)
	want := map[string]bool{}
	if a, ok := d.Arg("eras"); ok {
		for _, v := range a.Vals {
			want[v] = true
		}
	}
	var plugins []*Plugin
	var names []string
	for _, e := range eras {
		if len(want) > 0 && !want[e.name] {
			continue
		}
		delete(want, e.name)
		over := e.config()
		if d.HasArg("zero-costs") {
			over = merge(zeroCosts(), over)
		}
		plugins = append(plugins, configure(t, highRes(cpus), over))
		names = append(names, e.name)
	}
	if len(want) > 0 {
		d.Fatalf(t, "unknown eras %v", want)
	}
	return plugins, names
}

// timelineStep runs one command on p and returns what it printed.
func timelineStep(t *testing.T, d *datadriven.TestData, p *Plugin) string {
	cpu, id := 0, 0
	d.MaybeScanArgs(t, "cpu", &cpu)
	d.MaybeScanArgs(t, "id", &id)
	now := timeArg(t, d, "now", 0)
	var b strings.Builder
	switch d.Cmd {
	case "start":
		ht := hard(sdk.TimerID(id))
		ht.CallbackCost = int64(timeArg(t, d, "callback", 0))
		res := p.Start(cpu, now, ht, timeArg(t, d, "at", -1), 0)
		fmt.Fprintf(&b, "program: %s\nret: %d\n", fmtTimes(res.Program), res.Ret)
	case "cancel":
		res := p.Cancel(cpu, now, sdk.TimerID(id))
		fmt.Fprintf(&b, "program: %s\nret: %d\n", fmtTimes(res.Program), res.Ret)
	case "interrupt":
		res := p.Interrupt(cpu, now)
		var exp []string
		for _, e := range res.Expired {
			exp = append(exp, fmt.Sprintf("T%d@%s", e.ID, fmtTime(e.Now)))
		}
		if len(exp) == 0 {
			exp = []string{"none"}
		}
		fmt.Fprintf(&b, "expired: %s\nprogram: %s\n", strings.Join(exp, " "), fmtTimes(res.Program))
	case "state":
		fmt.Fprintf(&b, "expires_next: %s\nnext_event: %s\n", fmtTime(p.CPUState(cpu).ExpiresNext), fmtTime(p.NextEvent(cpu, 0, 0)))
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return b.String()
}

// timeArg reads a time argument; def < 0 makes it required.
func timeArg(t *testing.T, d *datadriven.TestData, key string, def ktime.Time) ktime.Time {
	a, ok := d.Arg(key)
	if !ok {
		if def < 0 {
			d.Fatalf(t, "%s needs %s=", d.Cmd, key)
		}
		return def
	}
	s := a.SingleVal(t)
	if s == "max" {
		return ktime.Max
	}
	ns, err := ktime.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "%s=%s: %v", key, s, err)
	}
	return ktime.Time(ns)
}

// fmtTime prints t in the largest unit that divides it.
func fmtTime(t ktime.Time) string {
	switch {
	case t == ktime.Max:
		return "max"
	case t != 0 && int64(t)%ms == 0:
		return strconv.FormatInt(int64(t)/ms, 10) + "ms"
	case t != 0 && int64(t)%us == 0:
		return strconv.FormatInt(int64(t)/us, 10) + "us"
	}
	return strconv.FormatInt(int64(t), 10) + "ns"
}

func fmtTimes(ts []ktime.Time) string {
	if len(ts) == 0 {
		return "none"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = fmtTime(t)
	}
	return strings.Join(s, " ")
}

// groupByEra returns the common output when every era agrees, else each
// distinct output under the eras that gave it, in era order.
func groupByEra(names, outs []string) string {
	if len(outs) == 1 || !slices.ContainsFunc(outs, func(o string) bool { return o != outs[0] }) {
		return outs[0]
	}
	var b strings.Builder
	done := make([]bool, len(outs))
	for i := range outs {
		if done[i] {
			continue
		}
		var group []string
		for j := i; j < len(outs); j++ {
			if !done[j] && outs[j] == outs[i] {
				done[j] = true
				group = append(group, names[j])
			}
		}
		fmt.Fprintf(&b, "%s:\n", strings.Join(group, ", "))
		for _, l := range strings.Split(strings.TrimSuffix(outs[i], "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}
