package sidebyside

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
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

// TestBackground: a suite bundle (cyclictest-t1-i1000: its manifest
// records the command's pid) is checked with the capture's background
// replayed beside the command: the golden, byte for byte; the command's
// callbacks (hrtimer_wakeup: its sleeps, and the main thread's and the
// capturer's replayed) are the callbacks section, the kernel's (dl_task_timer,
// started while cyclictest ran; blk_stat_timer_fn) the background section,
// each counted once: without the background the model has none of them and
// 1000 fewer hrtimer_wakeup starts than the capture's 1143.
func TestBackground(t *testing.T) {
	path := filepath.Join("..", "..", "validation", "captures", "cyclictest-t1-i1000.tcap")
	opts := Options{Experiment: experiment.Options{Opener: experiment.InProcess(builtin.Factories())}}
	tb, err := Check(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := tb.WriteText(&got); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "cyclictest-t1-i1000.background.txt")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s differs (go test -update rewrites it): %v\n%s", golden, err, got.Bytes())
	}
	rows := func(tb *Table) map[string]Row {
		m := map[string]Row{}
		for _, r := range tb.Rows {
			m[r.Section+"/"+r.Name] = r
		}
		return m
	}
	with := rows(tb)
	alone := opts
	alone.NoBackground = true
	tbAlone, err := Check(path, alone)
	if err != nil {
		t.Fatal(err)
	}
	without := rows(tbAlone)
	for _, c := range []struct {
		row          string
		real         float64
		model, alone float64 // the model with the background and alone
		aloneSection string
	}{
		{"callbacks/hrtimer_wakeup starts", 1143, 1144, 1001, "callbacks"},
		{"background/dl_task_timer starts", 42, 42, 0, "callbacks"},
		{"background/timer:blk_stat_timer_fn expiries", 10, 10, 0, "callbacks"},
		{"background/sched_rt_period_timer starts", 2, 2, 0, "callbacks"},
	} {
		r, ok := with[c.row]
		if !ok {
			t.Errorf("no row %s", c.row)
			continue
		}
		if r.Real != c.real || r.Model != c.model {
			t.Errorf("%s: real %v model %v, want %v %v", c.row, r.Real, r.Model, c.real, c.model)
		}
		name := c.row[strings.IndexByte(c.row, '/')+1:]
		if a, ok := without[c.aloneSection+"/"+name]; !ok || a.Model != c.alone {
			t.Errorf("%s without the background: %+v, want model %v", c.row, a, c.alone)
		}
	}
	for k := range without {
		if strings.HasPrefix(k, "background/") {
			t.Errorf("row %s without the background", k)
		}
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
