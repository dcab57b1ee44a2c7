package sidebyside

import (
	"reflect"
	"testing"
)

// stressNG015 is stress-ng 0.15.06's output of --timer 1 --timer-freq 1000
// -t 1s --metrics-brief on this suite's 2-CPU guest (stderr), and the
// miscellaneous part --metrics adds for --nanosleep.
const stressNG015 = `stress-ng: info:  [25219] setting to a 1 second run per stressor
stress-ng: info:  [25219] dispatching hogs: 1 timer
stress-ng: metrc: [25219] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
stress-ng: metrc: [25219]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
stress-ng: metrc: [25219] timer               841      1.00      0.01      0.03       840.93       22585.67
stress-ng: metrc: [24478] nanosleep          7732      2.00      0.19      1.32      3864.54        5118.17
stress-ng: metrc: [24478] miscellaneous metrics:
stress-ng: metrc: [24478] nanosleep          93939.33 nanosec sleep overrun (geometic mean of 1 instances)
stress-ng: info:  [25219] successful run completed in 1.00s
`

func TestParseStressNG(t *testing.T) {
	got, err := ParseStressNG([]byte(stressNG015))
	if err != nil {
		t.Fatal(err)
	}
	want := []StressNGMetric{{"timer", 841, 1.00, 840.93, nil}, {"nanosleep", 7732, 2.00, 3864.54, map[string]float64{"nanosec sleep overrun": 93939.33}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// Older versions print the table at level info.
	old := "stress-ng: info:  [1] timer          1000     2.00     0.10     0.90       500.00       1000.00\n"
	if got, _ := ParseStressNG([]byte(old)); len(got) != 1 || got[0].Rate != 500 {
		t.Errorf("info-level line: %+v", got)
	}
}

func TestParseCyclictest(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []CyclictestThread
	}{
		{"quiet", "# /dev/cpu_dma_latency set to 0us\nT: 0 (25032) P: 0 I:1000 C:    200 Min:     80 Act:   94 Avg:  121 Max:    3102\n",
			[]CyclictestThread{{Thread: 0, Cycles: 200, HasCycles: true, Min: 80, Avg: 121, Max: 3102}}},
		// The screen mode: the cursor moves up and the lines are rewritten;
		// the last of each thread wins.
		{"refresh", "policy: fifo: loadavg: 1.0 1.0 1.0 1/100 5\n\nT: 0 ( 5116) P:80 I:1000 C:   1000 Min:   46 Act:   68 Avg:   91 Max:    3429\nT: 1 ( 5117) P:80 I:1500 C:    666 Min:   40 Act:   50 Avg:   60 Max:    200\n\x1b[4A" +
			"policy: fifo: loadavg: 1.0 1.0 1.0 1/100 5\n\nT: 0 ( 5116) P:80 I:1000 C:   2000 Min:   45 Act:   68 Avg:   90 Max:    3429\nT: 1 ( 5117) P:80 I:1500 C:   1333 Min:   40 Act:   50 Avg:   61 Max:    250\n",
			[]CyclictestThread{{Thread: 0, Cycles: 2000, HasCycles: true, Min: 45, Avg: 90, Max: 3429}, {Thread: 1, Cycles: 1333, HasCycles: true, Min: 40, Avg: 61, Max: 250}}},
		// -h: bucket lines (tab-separated counts), the summary; a p99 in
		// the histogram and one past it (thread 1: 2 of 10 overflow).
		{"histogram", "# Histogram\n000000 000000\t000000\n000001 000090\t000005\n000002 000009\t000003\n000003 000001\t000000\n" +
			"# Total: 000000100 000000008\n# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00002\n# Max Latencies: 00003 00009\n# Histogram Overflows: 00000 00002\n# Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1: 00004 00007\n",
			[]CyclictestThread{{Thread: 0, Cycles: 100, HasCycles: true, Min: 1, Avg: 1, Max: 3, P99: 2, HasP99: true},
				{Thread: 1, Cycles: 10, HasCycles: true, Min: 1, Avg: 2, Max: 9, P99: 9, HasP99: true, Overflowed: true}}},
	} {
		got, err := ParseCyclictest([]byte(tc.out))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"T: 0 (1) P: 0 I:1000 C: x Min: 1 Act: 1 Avg: 1 Max: 1\n", "T: 0 (1) P: 0 I:1000 C: 1\n", "# Histogram\n000000 00x\n"} {
		if _, err := ParseCyclictest([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseCyclictest(f *testing.F) {
	f.Add([]byte("T: 0 (25032) P: 0 I:1000 C:    200 Min:     80 Act:   94 Avg:  121 Max:    3102\n"))
	f.Add([]byte("# Histogram\n000000 000001\t000002\n# Total: 1 2\n# Histogram Overflows: 00001 00000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := ParseCyclictest(b)
		if err != nil {
			return
		}
		for i := 1; i < len(ts); i++ {
			if ts[i].Thread <= ts[i-1].Thread {
				t.Fatalf("threads out of order: %+v", ts)
			}
		}
	})
}

func FuzzParseStressNG(f *testing.F) {
	f.Add([]byte(stressNG015))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := ParseStressNG(b)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if seen[m.Stressor] {
				t.Fatalf("stressor %s twice", m.Stressor)
			}
			seen[m.Stressor] = true
		}
	})
}
