package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/workload"
)

// worstCases returns the cyclictest worst cases of a result, by thread.
func worstCases(t *testing.T, r *experiment.Result) []workload.WorstCase {
	t.Helper()
	for _, w := range r.Workloads {
		if w.Type != "cyclictest" {
			continue
		}
		wc, ok := w.Extra["worst"].([]workload.WorstCase)
		if !ok {
			t.Fatalf("cyclictest %q has no worst cases", w.Name)
		}
		return wc
	}
	t.Fatal("no cyclictest in the result")
	return nil
}

// sumParts checks that a worst case's parts add up to its latency.
func sumParts(t *testing.T, wc workload.WorstCase) {
	t.Helper()
	var s int64
	for _, p := range wc.Parts {
		s += p.NS
		if p.Cause == "unattributed" {
			t.Errorf("T:%d: %d ns unattributed: %s", wc.Thread, p.NS, wc.Line())
		}
	}
	if s != wc.LatencyNS {
		t.Errorf("T:%d: parts sum to %d ns, latency %d ns", wc.Thread, s, wc.LatencyNS)
	}
}

// TestWorstCaseCatchup: on the 3.10 wheel each thread whose Max is large owes
// it to TIMER_SOFTIRQ catching up the gap, which the summary names with its
// size; the small Maxes are not blamed on it.
func TestWorstCaseCatchup(t *testing.T) {
	res := runScenario(t, "nohz-catchup.hcl", "per_jiffy")
	text := strings.Join(res.Workloads[0].Text, "\n")
	big := 0
	for _, wc := range worstCases(t, res) {
		sumParts(t, wc)
		top := wc.Parts[0]
		if wc.LatencyNS < 100000 {
			if top.Cause == "TIMER_SOFTIRQ" && top.Gap > 1000 {
				t.Errorf("T:%d: a small Max blamed on the catch-up: %s", wc.Thread, wc.Line())
			}
			continue
		}
		big++
		if top.Cause != "TIMER_SOFTIRQ" || top.Gap < 250000 || top.NS < wc.LatencyNS*9/10 {
			t.Errorf("T:%d: Max %d ns: want TIMER_SOFTIRQ catch-up of >= 250000 jiffies as 90%%+ of it, got %s", wc.Thread, wc.LatencyNS, wc.Line())
		}
		want := fmt.Sprintf("TIMER_SOFTIRQ catch-up %d jiffies", top.Gap)
		if !strings.Contains(text, want) {
			t.Errorf("summary does not name %q:\n%s", want, text)
		}
	}
	if big == 0 {
		t.Errorf("no thread has a large Max:\n%s", text)
	}
}

// TestWorstCaseBroadcast: with C6 and the HPET broadcast every thread's Max
// is the C6 exit plus the broadcast hand-off; the deadline LAPIC without C6
// pays neither.
func TestWorstCaseBroadcast(t *testing.T) {
	res := runScenario(t, "devices.hcl", "lapic_c6_broadcast")
	handoff := 0
	for _, wc := range worstCases(t, res) {
		sumParts(t, wc)
		causes := map[string]int64{}
		for _, p := range wc.Parts {
			causes[p.Cause] += p.NS
		}
		if causes["idle exit C6"] == 0 {
			t.Errorf("T:%d: no C6 exit in %s", wc.Thread, wc.Line())
		}
		if causes["broadcast hand-off"] > 0 {
			handoff++
		}
		if !strings.Contains(wc.Line(), "idle exit C6") {
			t.Errorf("T:%d: line does not name the C6 exit: %s", wc.Thread, wc.Line())
		}
		if got := causes["idle exit C6"] + causes["broadcast hand-off"]; got < wc.LatencyNS*9/10 {
			t.Errorf("T:%d: C6 exit + hand-off = %d of %d ns: %s", wc.Thread, got, wc.LatencyNS, wc.Line())
		}
	}
	if handoff == 0 {
		t.Error("no thread's Max has a broadcast hand-off")
	}
	text := strings.Join(res.Workloads[0].Text, "\n")
	if !strings.Contains(text, "broadcast hand-off") {
		t.Errorf("summary does not name the broadcast hand-off:\n%s", text)
	}
	for _, wc := range worstCases(t, runScenario(t, "devices.hcl", "lapic_deadline")) {
		for _, p := range wc.Parts {
			if p.Cause == "broadcast hand-off" || p.Cause == "idle exit C6" {
				t.Errorf("lapic_deadline T:%d: %s", wc.Thread, wc.Line())
			}
		}
	}
}
