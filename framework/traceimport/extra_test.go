package traceimport

import (
	"io"
	"strings"
	"testing"
)

// Lines of a 6.18 x86 KVM guest's tracefs trace (cyclictest and stress-ng
// --timer), one per extra kind.
const extraTrace = `# tracer: nop
      cyclictest-5115    [000] d..3.   150.308299: sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=001
      cyclictest-17927   [000] d..1.   520.173335: write_msr: 6e0, value 1283562cf71
          rec.sh-17924   [001] ...1.   520.078941: write_msr: 830, value fb #GP
 stress-ng-timer-2040    [001] d.h2.   612.000101: signal_generate: sig=14 errno=0 code=-2 comm=stress-ng-timer pid=2040 grp=1 res=0
 stress-ng-timer-2040    [001] d..1.   612.000109: signal_deliver: sig=14 errno=0 code=-2 sa_handler=55d0c0e2a1b0 sa_flags=14000000
`

func TestDecodeExtra(t *testing.T) {
	want := []Event{
		{Kind: SchedWaking, WakeComm: "migration/0", WakePID: 18, TargetCPU: 1},
		{Kind: WriteMSR, MSR: 0x6e0, Value: 0x1283562cf71},
		{Kind: WriteMSR, MSR: 0x830, Value: 0xfb},
		{Kind: SignalGenerate, Sig: 14, WakeComm: "stress-ng-timer", WakePID: 2040},
		{Kind: SignalDeliver, Sig: 14},
	}
	r := NewFtrace(strings.NewReader(extraTrace))
	r.DecodeExtra()
	for i, w := range want {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		got := Event{Kind: e.Kind, WakeComm: e.WakeComm, WakePID: e.WakePID, TargetCPU: e.TargetCPU, MSR: e.MSR, Value: e.Value, Sig: e.Sig, Result: e.Result}
		if e.Kind != SchedWaking {
			got.TargetCPU = 0
		}
		if got != w {
			t.Errorf("event %d = %+v, want %+v", i, got, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last event: %v, want EOF", err)
	}

	// Without DecodeExtra they stay unknown, as replay counts them;
	// sched_waking is decoded by every reader.
	r = NewFtrace(strings.NewReader(extraTrace))
	if e, err := r.Next(); err != nil || e.Kind != SchedWaking {
		t.Fatalf("plain reader returned %v, %v; want sched_waking", e, err)
	}
	if e, err := r.Next(); err != io.EOF {
		t.Fatalf("plain reader returned %v, %v; want EOF", e, err)
	}
	if u := r.Stats().Unknown; u["write_msr"] != 2 || u["signal_generate"] != 1 || u["signal_deliver"] != 1 {
		t.Errorf("unknown = %v", u)
	}

	// A signal_generate without its pid is an error naming the field.
	r = NewFtrace(strings.NewReader("x-1 [000] d..1. 1.000001: signal_generate: sig=14 errno=0 code=-2 comm=x grp=1 res=0\n"))
	r.DecodeExtra()
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), `field "pid"`) {
		t.Errorf("missing pid: %v", err)
	}
}
