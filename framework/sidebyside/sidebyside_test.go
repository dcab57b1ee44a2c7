package sidebyside

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/plugins/builtin"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestCheckGolden: the side-by-side of the committed bundle
// (testdata/cyclictest-t2-h.tcap: cyclictest -t2 -a -i 1000 -l 100 -m -q
// -h 100 -p 80 on this suite's 2-CPU KVM guest; its note says how it was
// recorded), as text and JSON, byte for byte, and the same on a second run.
func TestCheckGolden(t *testing.T) {
	bundle := filepath.Join("testdata", "cyclictest-t2-h.tcap")
	run := func() *Table {
		tb, err := Check(bundle, Options{Experiment: experiment.Options{Opener: experiment.InProcess(builtin.Factories())}})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	tb := run()
	for _, f := range []struct {
		golden string
		write  func(*Table, *bytes.Buffer) error
	}{
		{"cyclictest-t2-h.txt", func(t *Table, b *bytes.Buffer) error { return t.WriteText(b) }},
		{"cyclictest-t2-h.json", func(t *Table, b *bytes.Buffer) error { return t.WriteJSON(b) }},
	} {
		var got bytes.Buffer
		if err := f.write(tb, &got); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", f.golden)
		if *update {
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got.Bytes())
		}
		var again bytes.Buffer
		if err := f.write(run(), &again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), again.Bytes()) {
			t.Errorf("%s: a second check of the same bundle differs", f.golden)
		}
	}
	// The workload rows are there: two threads' cycles, latencies and
	// the -h p99, and the system rows.
	want := map[string]bool{"cyclictest T:0/cycles": true, "cyclictest T:1/p99 latency (-h histogram)": true,
		"interrupts/local timer interrupts (LOC)": true, "sched/context switches (sched_switch)": true,
		"tick/tick expiries": true, "callbacks/hrtimer_wakeup expiries": true, "cpu time/idle (idle + iowait)": true}
	for _, r := range tb.Rows {
		delete(want, r.Section+"/"+r.Name)
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
}

// TestWithin: each class's bound, relative (shares: points), inclusive;
// a zero real value is met only by zero; rows without a class or a value
// are not judged.
func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		r        Row
		in, judg bool
	}{
		{Row{Real: 100, Model: 105, Class: ClassCount}, true, true},
		{Row{Real: 100, Model: 105.1, Class: ClassCount}, false, true},
		{Row{Real: 100, Model: 90, Class: ClassTick}, true, true},
		{Row{Real: 100, Model: 89, Class: ClassTick}, false, true},
		{Row{Real: 1000, Model: 1150, Class: ClassThroughput}, true, true},
		{Row{Real: 40, Model: 50, Class: ClassLatency}, true, true},
		{Row{Real: 40, Model: 51, Class: ClassLatency}, false, true},
		{Row{Real: 10, Model: 12, Class: ClassShare, Unit: UnitShare}, true, true},
		{Row{Real: 10, Model: 12.5, Class: ClassShare, Unit: UnitShare}, false, true},
		{Row{Real: 0, Model: 0, Class: ClassCount}, true, true},
		{Row{Real: 0, Model: 1, Class: ClassCount}, false, true},
		{Row{Real: 5, Model: 5, Class: ClassNone}, false, false},
	} {
		tc.r.HasReal, tc.r.HasModel = true, true
		in, judged := tc.r.Within()
		if in != tc.in || judged != tc.judg {
			t.Errorf("%+v: within %v judged %v, want %v %v", tc.r, in, judged, tc.in, tc.judg)
		}
	}
	if _, judged := (Row{Real: 1, Class: ClassCount, HasReal: true}).Within(); judged {
		t.Error("a row without a model value is judged")
	}
	if d := (Row{Real: 0, Model: 3}).Diff(); !math.IsNaN(d) {
		t.Errorf("Diff of 0 -> 3 = %v, want NaN", d)
	}
}
