//go:build linux

package loader_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/contract"
	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/serve"
)

// The fake plugin binaries: the test binary, linked as tickemu-plugin-fault
// and started by the loader with faultEnv naming the fault (and markerEnv,
// which every process it forks inherits, so that a leftover is found in
// /proc whatever its parent or group).
const (
	faultEnv  = "LOADER_TEST_FAULT"
	markerEnv = "LOADER_TEST_MARKER"
)

// runFault is the fake plugin binary for one fault.
func runFault(fault string) {
	switch fault {
	case "exit": // exits at start
		fmt.Fprintln(os.Stderr, "fault: cannot map the HPET registers")
		os.Exit(3)
	case "garbage": // garbage on stdout instead of the handshake
		fmt.Println("Welcome to the timer plugin v0.1!")
		time.Sleep(time.Hour)
	case "silent": // never handshakes
		fmt.Fprintln(os.Stderr, "fault: warming up")
		time.Sleep(time.Hour)
	case "fork-silent": // forks children, then never handshakes
		forkSleepers(2)
		time.Sleep(time.Hour)
	case "fork-hang": // forks children, then hangs in a call
		forkSleepers(2)
	}
	if fault == "unknown-id" {
		serve.Serve(faultHRTimer())
	}
	serve.Serve(faultFactory(fault))
	os.Exit(0)
}

// forkSleepers starts n children that sleep, in the plugin's process group.
func forkSleepers(n int) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	for range n {
		c := exec.Command(exe)
		// The marker stays (the leftover check looks for it); the fault goes.
		c.Env = []string{"LOADER_TEST_SLEEP=1", markerEnv + "=" + os.Getenv(markerEnv)}
		if err := c.Start(); err != nil {
			panic(err)
		}
	}
}

// faultFactory is the clockevent "fault" that a serving fake binary offers:
// an echo device that misbehaves in its calls as fault says.
func faultFactory(fault string) sdk.Factory {
	return sdk.Factory{Kind: sdk.KindClockEvent, Name: "fault", New: func() sdk.Plugin {
		switch fault {
		case "describe-hang": // hangs while describing itself
			time.Sleep(time.Hour)
		case "wrong-kind": // describes itself as a clockevent, serves a wheel
			return &shimtest.TimerBase{Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindClockEvent, Name: "fault"}}}
		}
		d := newEcho()
		d.InfoValue.Name = "fault"
		switch fault {
		case "hang", "fork-hang": // hangs in a call
			d.AckFn = func(int, ktime.Time) (int64, ktime.Time) {
				fmt.Fprintln(os.Stderr, "fault: waiting for the comparator")
				time.Sleep(time.Hour)
				return 0, ktime.Max
			}
		case "past": // an interrupt time in the past
			d.SetNextEventFn = func(_ int, now ktime.Time, _ uint64) sdk.ProgramResult {
				return sdk.ProgramResult{FireAt: now - 1000, Cost: 10}
			}
		case "negative-cost":
			d.SetNextEventFn = func(_ int, now ktime.Time, ticks uint64) sdk.ProgramResult {
				return sdk.ProgramResult{FireAt: now.Add(int64(ticks)), Cost: -1e12}
			}
		}
		return d
	}}
}

// faultHRTimer is the hrtimer "fault" of the unknown-id fault: it reports a
// timer the host never started as expired.
func faultHRTimer() sdk.Factory {
	return sdk.Factory{Kind: sdk.KindHRTimer, Name: "fault", New: func() sdk.Plugin {
		return &shimtest.HRTimerBase{
			Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindHRTimer, Name: "fault"}},
			InterruptFn: func(_ int, now ktime.Time) sdk.InterruptResult {
				return sdk.InterruptResult{End: now + 100, Expired: []sdk.HRExpiry{{ID: 4242, Now: now}}}
			},
		}
	}}
}

// markedProcesses returns the live processes whose environment holds
// markerEnv=marker.
func markedProcesses(marker string) []int {
	want := []byte(markerEnv + "=" + marker + "\x00")
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// TestFaultyPluginBinaries: a fake plugin binary per fault. Each gives an
// error naming the plugin and the call (or the start phase), within the
// deadline (stretched at most cpuwait.MaxStretch times on a loaded
// machine), and leaves no process behind: not the plugin, not what it forked.
//
// Only the cases about a deadline run with the short one (1 s): the silent
// ones and describe-hang bound the start and the describe, hang and
// fork-hang the call (their start gets the generous one; describing the
// binary, its start included, stays bounded by the 1 s describe deadline).
// The others test what the plugin answers, so a slow start on a loaded
// machine must not end them first: they get the generous deadline.
func TestFaultyPluginBinaries(t *testing.T) {
	const deadline, generous = time.Second, 20 * time.Second
	for _, tc := range []struct {
		fault string
		kind  sdk.Kind
		// timed: the case tests a deadline; start is what it bounds (the
		// start and describe deadlines), call the call deadline only.
		timed string
		// call makes the failing call on the opened plugin; nil: Open fails.
		call func(p sdk.Plugin)
		want []string
	}{
		{fault: "exit", want: []string{"tickemu-plugin-fault", "cannot map the HPET registers"}},
		{fault: "garbage", want: []string{"tickemu-plugin-fault", `no go-plugin handshake on stdout (got "Welcome to the timer plugin v0.1!")`}},
		{fault: "silent", timed: "start", want: []string{"tickemu-plugin-fault", "no go-plugin handshake on stdout within 1s", "warming up"}},
		{fault: "fork-silent", timed: "start", want: []string{"tickemu-plugin-fault", "no go-plugin handshake on stdout within 1s"}},
		{fault: "describe-hang", timed: "start", want: []string{"tickemu-plugin-fault", "describe", "no answer to Describe within"}},
		{fault: "wrong-kind", want: []string{`clockevent plugin "fault"`, "during Open", "which is not a clockevent plugin"}},
		{fault: "hang", timed: "call", call: func(p sdk.Plugin) { p.(sdk.ClockEventDevice).Ack(0, 5) },
			want: []string{`clockevent plugin "fault"`, "stopped answering during Ack: no answer within 1s", "waiting for the comparator"}},
		{fault: "fork-hang", timed: "call", call: func(p sdk.Plugin) { p.(sdk.ClockEventDevice).Ack(0, 5) },
			want: []string{`clockevent plugin "fault"`, "stopped answering during Ack"}},
		{fault: "past", call: func(p sdk.Plugin) { p.(sdk.ClockEventDevice).SetNextEvent(0, 5000, 10) },
			want: []string{`clockevent plugin "fault" broke the plugin contract in SetNextEvent: interrupt at 4000, not after now 5000`}},
		{fault: "negative-cost", call: func(p sdk.Plugin) { p.(sdk.ClockEventDevice).SetNextEvent(0, 5000, 10) },
			want: []string{`clockevent plugin "fault" broke the plugin contract in SetNextEvent: cost -1000000000000 ns`}},
		{fault: "unknown-id", kind: sdk.KindHRTimer, call: func(p sdk.Plugin) { p.(sdk.HRTimerBase).Interrupt(0, 5000) },
			want: []string{`hrtimer plugin "fault" broke the plugin contract in Interrupt: expired timer id 4242`}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			kind := tc.kind
			if kind == "" {
				kind = sdk.KindClockEvent
			}
			dir := t.TempDir()
			linkBinary(t, dir, "fault")
			marker := fmt.Sprintf("%s-%d-%d", tc.fault, os.Getpid(), time.Now().UnixNano())
			opts := loader.Options{Builtins: []sdk.Factory{}, Path: []string{dir},
				Env:         []string{faultEnv + "=" + tc.fault, markerEnv + "=" + marker},
				CallTimeout: deadline, DescribeTimeout: deadline}
			switch tc.timed {
			case "start":
			case "call":
				opts.StartTimeout = generous
			default:
				opts.CallTimeout, opts.StartTimeout, opts.DescribeTimeout = generous, generous, generous
			}
			c, _ := newCatalog(t, opts)
			// start is when the phase with the deadline began.
			start := time.Now()
			err := func() (err error) {
				inst, err := c.Open(kind, "fault", loader.Default)
				if err != nil {
					return err
				}
				defer inst.Kill()
				if tc.call == nil {
					return fmt.Errorf("Open(%s, fault) succeeded", kind)
				}
				p := contract.Wrap(kind, "fault", inst.Plugin(), contract.Limits{CPUs: 2})
				defer func() {
					switch f := recover().(type) {
					case nil:
					case *sdk.TransportError:
						err = f
					case *sdk.ContractError:
						err = f
					default:
						panic(f)
					}
				}()
				start = time.Now()
				tc.call(p)
				return errors.New("the call returned normally")
			}()
			elapsed := time.Since(start)
			t.Logf("after %v: %v", elapsed, err)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v, want it to contain %q", err, w)
				}
			}
			if tc.timed != "" && elapsed > stretchBound(deadline) {
				t.Errorf("the error took %v; the deadline is %v, at most %v on a loaded machine", elapsed, deadline, stretchBound(deadline))
			}
			until := time.Now().Add(5 * time.Second)
			for left := markedProcesses(marker); len(left) > 0; left = markedProcesses(marker) {
				if time.Now().After(until) {
					for _, pid := range left {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Fatalf("processes %v of the faulty plugin still run", left)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
