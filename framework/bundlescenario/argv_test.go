package bundlescenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclwrite"
)

// attrs renders a workload block's attributes as "type.name: a=v a=v".
func attrs(w Workload) string {
	var b strings.Builder
	b.WriteString(w.Type + "." + w.Name + ":")
	for _, a := range w.Attrs {
		b.WriteString(" " + a.Name + "=" + strings.TrimSpace(string(hclwrite.TokensForValue(a.Value).Bytes())))
	}
	return b.String()
}

// TestTranslate: argv -> workload attributes and the run's length, on a
// 2-CPU machine, following each tool's option parsing (cyclictest's
// process_options(), stress-ng's options and stressors).
func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		argv string
		want []string // one line per workload block
		dur  int64    // ns
	}{
		// The brief's own captures.
		{"cyclictest -t2 -a -i 1000 -l 5000 -m -q", []string{
			`cyclictest.cyclictest: threads=2 interval="1000us" distance="500us" priority=0 loops=5000 dma_latency=true`},
			5001*1000*1000 + 1e6}, // the fastest thread's loops: cyclictest then stops them all
		{"stress-ng --timer 1 -t 2s --metrics-brief", []string{
			`stress_ng_timer.timer: instances=1 alarm="2s"`}, 2e9},
		// -t without a number: one thread per CPU; -t N glued or apart.
		{"cyclictest -t -p 99 -i 200 -D 10", []string{
			`cyclictest.cyclictest: threads=2 interval="200us" distance="500us" priority=99 dma_latency=true`}, 10e9},
		{"cyclictest -t 3 -i500", []string{
			`cyclictest.cyclictest: threads=3 interval="500us" distance="500us" priority=0 dma_latency=true`}, 0},
		{"cyclictest --threads=2 --interval=250 --distance=0 --loops=100", []string{
			`cyclictest.cyclictest: threads=2 interval="250us" distance="0us" priority=0 loops=100 dma_latency=true`}, 101*250*1000 + 1e6},
		// -a with a list pins round robin; -t alone then counts its CPUs.
		{"cyclictest -a 1 -t -mq", []string{
			`cyclictest.cyclictest: threads=1 cpus="1" interval="1000us" distance="500us" priority=0 dma_latency=true`}, 0},
		{"cyclictest -a0-1 -t4", []string{
			`cyclictest.cyclictest: threads=4 cpus="0-1" interval="1000us" distance="500us" priority=0 dma_latency=true`}, 0},
		// --policy fifo without -p: priority threads + 1.
		{"cyclictest --policy=fifo -t2", []string{
			`cyclictest.cyclictest: threads=2 interval="1000us" distance="500us" priority=3 dma_latency=true`}, 0},
		{"cyclictest -p 0", []string{
			`cyclictest.cyclictest: threads=1 interval="1000us" distance="500us" priority=2 dma_latency=true`}, 0},
		// -h forces distance 0 (the run's length uses it), -r, -c 1, -N.
		{"cyclictest -t2 -h 400 -l 10 -r -c 1 -N", []string{
			`cyclictest.cyclictest: clock="realtime" nsecs=true threads=2 interval="1000us" distance="500us" priority=0 mode="relative" histogram=400 loops=10 dma_latency=true`}, 11*1000*1000 + 1e6},
		// PM QoS: --laptop drops the request, --latency sets its value.
		{"cyclictest --laptop", []string{
			`cyclictest.cyclictest: threads=1 interval="1000us" distance="500us" priority=0 dma_latency=false`}, 0},
		{"cyclictest --latency=50", []string{
			`cyclictest.cyclictest: threads=1 interval="1000us" distance="500us" priority=0 dma_latency=true latency="50us"`}, 0},
		// -S: one thread per CPU, every CPU, -a ignored; -D in minutes;
		// -l and -D: whichever ends first.
		{"cyclictest -S -a 1 -D 1m", []string{
			`cyclictest.cyclictest: threads=2 interval="1000us" distance="500us" priority=0 dma_latency=true`}, 60e9},
		{"cyclictest -l 1000 -D 5", []string{
			`cyclictest.cyclictest: threads=1 interval="1000us" distance="500us" priority=0 loops=1000 dma_latency=true`}, 1001*1000*1000 + 1e6},
		{"cyclictest -l 10000 -D 5", []string{
			`cyclictest.cyclictest: threads=1 interval="1000us" distance="500us" priority=0 loops=10000 dma_latency=true`}, 5e9},
		// stress-ng: N = 0 is one per CPU; --timer-freq; -T; --taskset.
		{"stress-ng --timer 0 --timer-freq 10000 -t 5", []string{
			`stress_ng_timer.timer: instances=2 alarm="5s" freq="10000Hz"`}, 5e9},
		{"stress-ng -T 2 --taskset 1 --timeout=1m --metrics", []string{
			`stress_ng_timer.timer: instances=2 cpus="1" alarm="60s"`}, 60e9},
		{"stress-ng --hrtimers 1 -t 2s", []string{`stress_ng_hrtimers.hrtimers: instances=1`}, 2e9},
		{"stress-ng --nanosleep 1 --nanosleep-threads 4 --nanosleep-method all -t 3s", []string{
			`stress_ng_nanosleep.nanosleep: instances=1 alarm="3s" method="all" threads=4`}, 3e9},
		{"stress-ng --timermix 2 -t 2s", []string{`timermix.timermix: instances=2`}, 2e9},
		// An ops limit: no duration from the flags (the capture's wall
		// time is the run's length); the timer model stops after its ops.
		{"stress-ng --timer 1 --timer-ops 5000 --metrics-brief", []string{`stress_ng_timer.timer: instances=1 ops=5000`}, 0},
		// Several stressors: one block each, in the order given.
		{"stress-ng --timer 1 --hrtimers 1 --cpu 1 -t 1", []string{
			`stress_ng_timer.timer: instances=1 alarm="1s"`, `stress_ng_hrtimers.hrtimers: instances=1`, `stress_ng_cpu.cpu: instances=1`}, 1e9},
		{"/usr/bin/stress-ng --timer=1 -t 2", []string{`stress_ng_timer.timer: instances=1 alarm="2s"`}, 2e9},
	} {
		cmd, err := Translate(strings.Fields(tc.argv), 2)
		if err != nil {
			t.Errorf("%s: %v", tc.argv, err)
			continue
		}
		var got []string
		for _, w := range cmd.Workloads {
			got = append(got, attrs(w))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", tc.argv, strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
		}
		if cmd.DurationNS != tc.dur {
			t.Errorf("%s: duration %d ns, want %d", tc.argv, cmd.DurationNS, tc.dur)
		}
	}
}

// TestTranslateErrors: a flag the model cannot follow, or a bad value, is an
// error naming the flag.
func TestTranslateErrors(t *testing.T) {
	for _, tc := range []struct {
		argv, flag, msg string
	}{
		{"cyclictest -x", "--posix_timers", "not modelled"},
		{"cyclictest -s", "--system", "not modelled"},
		{"cyclictest --priospread -p 90", "--priospread", "not modelled"},
		{"cyclictest --policy=rr -p 1", "--policy", "not modelled"},
		{"cyclictest -b 100", "--breaktrace", "--break"},
		{"cyclictest -i", "-i", "needs an argument"},
		{"cyclictest -i 1k", "--interval", "not a whole number"},
		{"cyclictest -a 0-3", "--affinity", "names CPU 3"},
		{"cyclictest -a !1", "--affinity", "cpulist"},
		{"cyclictest -Z", "-Z", "unknown option"},
		{"cyclictest --frobnicate", "--frobnicate", "unknown option"},
		{"cyclictest -D 5x", "--duration", "not a duration"},
		{"cyclictest -D 99999999999d", "--duration", "longer than the model runs"},
		{"cyclictest -l 1000000000 -i 1000000000", "--loops", "longer than the model runs"},
		{"cyclictest -l 5000000000", "--loops", "0 to 1000000000"},
		{"cyclictest -i 0", "--interval", "1 us to 1000 s"},
		{"stress-ng --timer 1 -t 999999999y", "--timeout", "longer than the model runs"},
		{"cyclictest -c 2", "--clock", "clock 2"},
		{"cyclictest -p 100", "--priority", "outside 0..99"},
		{"cyclictest extra", "extra", "operand"},
		{"stress-ng --clock 1 -t 2", "--clock", "clock stressor has no workload"},
		{"stress-ng --timer 1 --alarm-ops 5", "--alarm-ops", "alarm stressor"},
		{"stress-ng --timer 1 --timer-ops 0", "--timer-ops", "not a bogo op count"},
		{"stress-ng --timer 1 --hrtimers-ops 100", "--hrtimers-ops", "does not run"},
		{"stress-ng --timer 1 --nanosleep-threads 4", "--nanosleep-threads", "does not run"},
		{"stress-ng --timer 1 --timer-freq fast", "--timer-freq", "not a frequency"},
		{"stress-ng --nanosleep 1 --nanosleep-method sometimes", "--nanosleep-method", "method"},
		{"stress-ng --timer -1", "--timer", "-1 instances"},
		{"stress-ng --timer 1 --taskset 5", "--taskset", "names CPU 5"},
	} {
		_, err := Translate(strings.Fields(tc.argv), 2)
		var fe *FlagError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a FlagError", tc.argv, err)
			continue
		}
		if fe.Flag != tc.flag || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v (flag %s), want flag %s and %q", tc.argv, err, fe.Flag, tc.flag, tc.msg)
		}
	}
	for _, argv := range []string{"sleep 1", "stress-ng --metrics -t 1", ""} {
		if _, err := Translate(strings.Fields(argv), 2); err == nil {
			t.Errorf("%q: no error", argv)
		}
	}
}

// FuzzTranslate: any argv either translates into at least one workload
// block or is refused; nothing panics.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{"cyclictest -t2 -a -i 1000 -l 5000 -m -q", "cyclictest -a0-1 -t -h 100 --latency=5", "stress-ng --timer 1 -t 2s --metrics-brief", "stress-ng --nanosleep 0 --nanosleep-method all --taskset 1 -t 1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cmd, err := Translate(strings.Fields(s), 4)
		if err != nil {
			return
		}
		if len(cmd.Workloads) == 0 || cmd.DurationNS < 0 || cmd.DurationNS > maxRunSeconds*1e9+1e9*1001 {
			t.Fatalf("%q: %d workloads, duration %d", s, len(cmd.Workloads), cmd.DurationNS)
		}
	})
}
