package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/workload"
)

func TestRunMetricJSON(t *testing.T) {
	for _, v := range []float64{0, 1.5, 182381.6666666667, math.NaN(), math.Inf(1), math.Inf(-1), 1e-300} {
		b, err := json.Marshal(RunMetric{Bench: "K", Unit: "u", Better: "lower", Value: v})
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		var m RunMetric
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if m.Bench != "K" || m.Unit != "u" || m.Better != "lower" || !(m.Value == v || math.IsNaN(v) && math.IsNaN(m.Value)) {
			t.Errorf("%v: read back %+v from %s", v, m, b)
		}
	}
	var m RunMetric
	if err := json.Unmarshal([]byte(`{"value":"12"}`), &m); err == nil {
		t.Error("a number in a string reads")
	}
}

func TestGridShards(t *testing.T) {
	g := NewGrid([]string{"a", "b"}, nil, []uint64{1, 2, 3, 4, 5})
	for n := 1; n <= 12; n++ {
		seen := map[int]int{}
		for i := 1; i <= n; i++ {
			cells, err := g.Shard(i, n)
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) < g.Len()/n || len(cells) > g.Len()/n+1 {
				t.Errorf("shard %d/%d has %d of %d cells", i, n, len(cells), g.Len())
			}
			for _, c := range cells {
				seen[c]++
			}
		}
		for c := range g.Len() {
			if seen[c] != 1 {
				t.Errorf("%d shards: cell %d in %d shards", n, c, seen[c])
			}
		}
	}
	for _, bad := range [][2]int{{0, 1}, {2, 1}, {1, 0}} {
		if _, err := g.Shard(bad[0], bad[1]); err == nil {
			t.Errorf("Shard(%d, %d): no error", bad[0], bad[1])
		}
	}
}

// FuzzReadShardFile reads arbitrary bytes as a shard file and merges what
// reads: nothing may panic, and a file that reads writes back to a file that
// reads the same.
func FuzzReadShardFile(f *testing.F) {
	e := Experiment{Tickemu: "0.1.0", File: "f.hcl", Variants: []string{"a"}, Sweeps: []SweepInfo{{Name: "hz", Key: "hz", Values: []string{"250"}}},
		Seeds: []uint64{1, 2}, Alpha: 0.05}
	runs := []RunOutcome{{Variant: "a", Seed: 1, Header: []string{"cpus: 1"}, Bench: []string{"BenchmarkKernel/hz=250/variant=a 1 3 x"},
		Metrics: []RunMetric{{Bench: "Kernel/hz=250", Unit: "x", Better: "lower", Value: 3}}}, {Variant: "a", Seed: 2, Err: ErrInterrupted}}
	var b bytes.Buffer
	if err := NewShardFile(e, 1, 1, []int{0, 1}, runs, "interrupt").Write(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"tickemu-shard","version":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ReadShardFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		_, _ = Merge([]string{"f"}, []*ShardFile{sf})
		var out bytes.Buffer
		if err := sf.Write(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadShardFile(&out); err != nil {
			t.Fatalf("a file that read does not read after writing: %v", err)
		}
	})
}

func TestWithoutPoint(t *testing.T) {
	for _, tc := range []struct{ bench, key, want string }{
		{"Kernel/hz=250", "hz=250", "Kernel"},
		{"Kernel/hz=250#2", "hz=250", "Kernel#2"},
		{"Cyclictest/hz=250/catchup=x/thread=0", "hz=250/catchup=x", "Cyclictest/thread=0"},
		{"Cyclictest/hz=2500/thread=0", "hz=250", "Cyclictest/hz=2500/thread=0"}, // another value
		{"Kernel", "", "Kernel"},
	} {
		if got := withoutPoint(tc.bench, tc.key); got != tc.want {
			t.Errorf("withoutPoint(%q, %q) = %q, want %q", tc.bench, tc.key, got, tc.want)
		}
	}
}

// TestShardDetail: a cell's report detail, the timeline's spans included,
// reads back from a shard file as it was written.
func TestShardDetail(t *testing.T) {
	wc := workload.WorstCase{Thread: 1, WakePath: kernel.WakePath{At: 5000, CPU: 2, LatencyNS: 900,
		Parts: []kernel.WakePart{{Cause: "irq", NS: 900}},
		Spans: []kernel.Span{{Kind: kernel.SpanSoftirq, Start: 4900, End: 5900, Detail: "TIMER", Gap: 7}}}}
	small := wc
	small.Thread, small.LatencyNS, small.Spans = 0, 100, []kernel.Span{{Kind: kernel.SpanIRQEntry, Start: 1, End: 2}}
	res := &Result{Workloads: []workload.Report{{Type: "cyclictest", Name: "rt", Extra: map[string]any{
		"latency_us": []workload.LatencyHist{{Thread: 0, Buckets: [][2]int64{{3, 9}}, MaxNS: 3100}},
		"worst":      []workload.WorstCase{small, wc},
	}}}, Kernel: KernelSummary{CPUs: []CPUSummary{{CPU: 0, Ticks: 4}}}}
	d := DetailOf(res)
	got, ok := d.Case()
	if !ok || got.Thread != 1 || len(got.Spans) != 1 || got.Spans[0] != wc.Spans[0] {
		t.Fatalf("the timeline's case is %+v, want thread 1 with its span", got)
	}
	if d.Worst[0].Cases[0].Spans != nil || d.Worst[0].Cases[1].Spans != nil {
		t.Error("the worst cases keep their spans besides the timeline's")
	}
	e := Experiment{Tickemu: "t", File: "f.hcl", Source: "machine {}\n", Variants: []string{"a"}, Sweeps: []SweepInfo{}, Seeds: []uint64{1}}
	runs := []RunOutcome{{Variant: "a", Seed: 1, Metrics: []RunMetric{{Bench: "Kernel", Unit: "x", Value: 1}}, Detail: d}}
	var b bytes.Buffer
	if err := NewShardFile(e, 1, 1, []int{0}, runs, "").Write(&b); err != nil {
		t.Fatal(err)
	}
	sf, err := ReadShardFile(&b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Merge([]string{"f"}, []*ShardFile{sf})
	if err != nil {
		t.Fatal(err)
	}
	back := c.Runs[0].Detail
	if !reflect.DeepEqual(back, d) {
		t.Errorf("the detail read back differs:\n got %+v\nwant %+v", back, d)
	}
	if sf.Experiment.Source != e.Source {
		t.Errorf("the source read back is %q", sf.Experiment.Source)
	}
}

// TestAttackShardEndless (issue 31) feeds a shard file of endless blanks
// through a FIFO: the JSON decoder never ends a value, the limit ends it.
func TestAttackShardEndless(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		blank := bytes.Repeat([]byte{' '}, 1<<16)
		for {
			if _, err := f.Write(blank); err != nil {
				return // the reader stopped
			}
		}
	}()
	_, err := LoadShardFile(p)
	want := p + " is larger than the 256 MiB limit for a shard file"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// TestAttackShardValues (issue 31): a shard file edited to hold what no run
// writes is refused naming the cell and the value, even with its
// experiment_id recomputed; merge accepted a metric of 1e308 (printing
// -9223372036854775808% and -Inf%), a cell whose metrics repeat 8000 times,
// and escape sequences that reached the terminal.
func TestAttackShardValues(t *testing.T) {
	good := func() *ShardFile {
		e := Experiment{Tickemu: "0.1.0", File: "f.hcl", Variants: []string{"a"}, Seeds: []uint64{1}, Alpha: 0.05,
			ConfigHashes: []string{strings.Repeat("ab", 32)}}
		runs := []RunOutcome{{Variant: "a", Seed: 1, Header: []string{"cpus: 1"}, Bench: []string{"BenchmarkKernel/variant=a\t1\t3 x"},
			Metrics: []RunMetric{{Bench: "Kernel", Unit: "x", Better: "lower", Value: 3}}}}
		return NewShardFile(e, 1, 1, []int{0}, runs, "")
	}
	for _, tc := range []struct {
		name string
		edit func(f *ShardFile)
		want string
	}{
		{"1e308 metric", func(f *ShardFile) { f.Cells[0].Metrics[0].Value = 1e308 }, "cell 1 (index 0): metric Kernel x = 1e+308: outside [-1e+18, 1e+18]"},
		{"8000 repeats", func(f *ShardFile) {
			for range 8000 {
				f.Cells[0].Metrics = append(f.Cells[0].Metrics, f.Cells[0].Metrics[0])
			}
		}, "metric Kernel x appears more than once"},
		{"escape in a variant", func(f *ShardFile) { f.Experiment.Variants[0] = "a\x1b]0;pwned\x07" }, `variant "a\\x1b]0;pwned\\x07" holds characters a terminal acts on`},
		{"escape in an error", func(f *ShardFile) { f.Cells[0].Error = "\x1b[2J" }, `cell 1 (index 0): error "\\x1b[2J"`},
		{"bidi in a bench line", func(f *ShardFile) { f.Cells[0].Bench[0] += "\u202e" }, `line "BenchmarkKernel/variant=a\\t1\\t3 x\\u202e"`},
		{"better sideways", func(f *ShardFile) { f.Cells[0].Metrics[0].Better = "sideways" }, `better "sideways"`},
		{"hashes for no variant", func(f *ShardFile) { f.Experiment.ConfigHashes = append(f.Experiment.ConfigHashes, "00") }, "2 config hashes for 1 variants"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good()
			tc.edit(f)
			f.ID = f.Experiment.ID()
			var b bytes.Buffer
			if err := f.Write(&b); err != nil {
				t.Fatal(err)
			}
			_, err := ReadShardFile(&b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
	var b bytes.Buffer
	good().Write(&b)
	if _, err := ReadShardFile(&b); err != nil {
		t.Fatalf("the good file: %v", err)
	}
}

// TestShardInterrupted: a shard stopped by Ctrl-C keeps every run: the
// finished run with its results, the run stopped early with its partial
// results (marked incomplete), the run not started marked interrupted; the
// file says it was interrupted, and its merge is the comparison the
// unsharded run interrupted alike makes (IncompleteRuns with the partial
// metrics, the unfinished runs counted). An edited file whose cells are
// interrupted but which does not say so, or whose partial results are not
// marked, is refused.
func TestShardInterrupted(t *testing.T) {
	e := Experiment{Tickemu: "0.1.0", File: "f.hcl", Variants: []string{"a"}, Sweeps: []SweepInfo{}, Seeds: []uint64{1, 2, 3}, Alpha: 0.05}
	metric := func(v float64) []RunMetric {
		return []RunMetric{{Bench: "Kernel", Unit: "x", Better: "lower", Value: v}}
	}
	in := &Incomplete{Reason: "interrupted", ReachedNS: 4e9, EndNS: 10e9}
	runs := []RunOutcome{
		{Variant: "a", Seed: 1, Header: []string{"cpus: 1"}, Bench: []string{"BenchmarkKernel/variant=a 1 3 x"}, Metrics: metric(3)},
		{Variant: "a", Seed: 2, Header: []string{"cpus: 1"}, Bench: []string{"BenchmarkKernel/variant=a 1 2 x"}, Metrics: metric(2), Err: &IncompleteError{Incomplete: in}},
		{Variant: "a", Seed: 3, Err: ErrInterrupted},
	}
	sf := NewShardFile(e, 1, 1, []int{0, 1, 2}, runs, "interrupt")
	var b bytes.Buffer
	if err := sf.Write(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	back, err := ReadShardFile(&b)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if back.Interrupted != "interrupt" {
		t.Errorf("interrupted %q, want the signal", back.Interrupted)
	}
	if stopped, notStarted := back.Unfinished(); stopped != 1 || notStarted != 1 {
		t.Errorf("Unfinished() = %d, %d; want 1 stopped early, 1 not started", stopped, notStarted)
	}
	c, err := Merge([]string{"f"}, []*ShardFile{back})
	if err != nil {
		t.Fatal(err)
	}
	want := AnalyzeGrid(e.File, e.Grid(), runs, e.Alpha, 0)
	if c.Interrupted != 2 || !reflect.DeepEqual(c.IncompleteRuns, want.IncompleteRuns) || !reflect.DeepEqual(c.Failures, want.Failures) ||
		fmt.Sprint(c.Metrics) != fmt.Sprint(want.Metrics) || len(c.IncompleteRuns) != 1 || len(c.IncompleteRuns[0].Metrics) != 1 {
		t.Errorf("merged: interrupted %d, incomplete runs %+v, failures %+v, metrics %+v\nwant: incomplete runs %+v, failures %+v, metrics %+v",
			c.Interrupted, c.IncompleteRuns, c.Failures, c.Metrics, want.IncompleteRuns, want.Failures, want.Metrics)
	}
	if !reflect.DeepEqual(c.Runs[1].Bench, runs[1].Bench) || !reflect.DeepEqual(c.Runs[1].Header, runs[1].Header) {
		t.Errorf("the run stopped early reads back with bench %q, header %q", c.Runs[1].Bench, c.Runs[1].Header)
	}

	// Signalled after its last run: nothing is missing, the file is whole.
	if f := NewShardFile(e, 1, 1, []int{0}, runs[:1:1], "interrupt"); f.Interrupted != "" {
		t.Errorf("a shard whose runs all finished is marked interrupted %q", f.Interrupted)
	}
	for _, tc := range []struct {
		name string
		edit func(f *ShardFile)
		want string
	}{
		{"unmarked file", func(f *ShardFile) { f.Interrupted = "" }, "cell 2 (index 1): interrupted, but the file does not say the shard was"},
		{"unmarked partial results", func(f *ShardFile) { f.Cells[1].Incomplete = nil }, "cell 2 (index 1): an error and metrics"},
		{"incomplete, not interrupted", func(f *ShardFile) { f.Cells[1].Interrupted = false }, "cell 2 (index 1): incomplete but not interrupted"},
		{"stop past the end", func(f *ShardFile) {
			f.Cells[1].Incomplete = &Incomplete{Reason: "interrupted", ReachedNS: 11e9, EndNS: 10e9}
		}, "outside the run"},
	} {
		f := NewShardFile(e, 1, 1, []int{0, 1, 2}, runs, "interrupt")
		tc.edit(f)
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadShardFile(&b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
