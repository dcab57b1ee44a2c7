package experiment

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
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
	if err := NewShardFile(e, 1, 1, []int{0, 1}, runs).Write(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"tickemu-shard","version":1}`))
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
