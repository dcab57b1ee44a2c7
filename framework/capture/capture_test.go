package capture

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
)

// sampleTrace is what the fake kernel "records": the workload writes it
// into the fake tracefs's trace file.
const sampleTrace = `# tracer: nop
#
# entries-in-buffer/entries-written: 3/3   #P:2
#
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
          <idle>-0       (-------) [001] d.h1.   100.000100: hrtimer_start: hrtimer=000000001 function=tick_nohz_handler expires=100004000000 softexpires=100004000000 mode=ABS|PINNED|HARD was_armed=0
          <idle>-0       (-------) [001] d.h1.   100.000200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=7 next_prio=120
              sh-7       (      7) [001] d.h1.   100.000300: sched_switch: prev_comm=sh prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
`

// TestRunOnFakeTracefs runs the whole capture, as a user, on a tracefs made
// of plain files (the top-level buffer: a plain directory has no
// instances), /proc copies and a fake host: the workload writes the trace
// itself. The bundle holds what it should and the settings are back.
func TestRunOnFakeTracefs(t *testing.T) {
	tfs := fakeTracefs(t)
	before := settingsOf(t, tfs)
	host := fakeRoot(t, nil)
	dir := t.TempDir()
	sample := filepath.Join(dir, "sample.txt")
	if err := os.WriteFile(sample, []byte(sampleTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.tcap")
	var stdout, stderr, log bytes.Buffer
	c, err := New(Options{
		Command: []string{"sh", "-c", `cat "$1" > "$2"; echo T: 0 Max: 7; echo oops >&2; exit 3`, "sh", sample, filepath.Join(tfs, "trace")},
		Out:     out, Note: "fake", Tool: "test", Global: true,
		Stdout: &stdout, Stderr: &stderr, Log: &log,
		Tracefs: tfs, Proc: "../bundle/testdata/proc618", Root: host, SkipRootCheck: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Run()
	if err != nil {
		t.Fatal(err)
	}
	if after := settingsOf(t, tfs); !reflect.DeepEqual(after, before) {
		t.Errorf("settings after the capture\n%v\nwant\n%v", after, before)
	}
	if stdout.String() != "T: 0 Max: 7\n" || stderr.String() != "oops\n" {
		t.Errorf("echoed stdout %q stderr %q", stdout.String(), stderr.String())
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if m.Name != "sh" || m.Note != "fake" || m.Tool != "test" || m.ExitStatus != 3 || m.Signal != "" || m.Command[0] != "sh" {
		t.Errorf("manifest name %q note %q tool %q exit %d signal %q command %q", m.Name, m.Note, m.Tool, m.ExitStatus, m.Signal, m.Command)
	}
	if m.Host.HZ != 250 || m.Host.Release != kvmRelease || m.Trace.Clock != "mono" || m.Trace.BufferKB != DefaultBufferKB || m.Trace.Instance != "" {
		t.Errorf("host HZ %d release %q trace %+v", m.Host.HZ, m.Host.Release, m.Trace)
	}
	wantEvents := []string{"timer/hrtimer_start", "irq/irq_handler_entry", "sched/sched_switch"}
	if !reflect.DeepEqual(m.Trace.Events, wantEvents) {
		t.Errorf("events %q, want %q", m.Trace.Events, wantEvents)
	}
	if !reflect.DeepEqual(m.Trace.Lost, []bundle.Lost{{CPU: 1, Overrun: 123, Dropped: 7}}) || !strings.Contains(strings.Join(res.Notes, "\n"), "lost 130 events") {
		t.Errorf("lost %+v notes %q", m.Trace.Lost, res.Notes)
	}
	if len(m.Before.Stat) == 0 || len(m.After.Softirqs) == 0 {
		t.Error("no /proc snapshots")
	}
	if len(m.Changed) == 0 || m.Changed[0] != (bundle.Setting{Path: "tracing_on", Old: "1", New: "0"}) {
		t.Errorf("changed %+v", m.Changed)
	}
	for name, want := range map[string]string{bundle.TraceName: sampleTrace, bundle.StdoutName: "T: 0 Max: 7\n", bundle.StderrName: "oops\n"} {
		got, err := b.File(name)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	wantCounts := []EventCount{{"sched_switch", 2}, {"hrtimer_start", 1}}
	if !reflect.DeepEqual(res.Counts, wantCounts) {
		t.Errorf("counts %v want %v", res.Counts, wantCounts)
	}
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tfs := fakeTracefs(t)
	empty := t.TempDir()
	notTracefs := t.TempDir()
	write(t, notTracefs, "README", "x")
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no command", Options{}, "no command"},
		{"out is an input", Options{Command: []string{"cat", in}, Out: in}, "would overwrite the workload's input"},
		{"out is an input via flag=", Options{Command: []string{"cat", "--input=" + in}, Out: in}, "would overwrite"},
		{"out is a directory", Options{Command: []string{"true"}, Out: dir}, "is a directory"},
		{"out in a missing directory", Options{Command: []string{"true"}, Out: filepath.Join(dir, "no", "x.tcap")}, "cannot write in"},
		{"bad events", Options{Command: []string{"true"}, Out: filepath.Join(dir, "x.tcap"), Events: "a:b"}, "not GROUP/NAME"},
		{"negative buffer", Options{Command: []string{"true"}, Out: filepath.Join(dir, "x.tcap"), BufferKB: -1}, "--buffer-kb -1"},
		{"no tracefs", Options{Command: []string{"true"}, Out: filepath.Join(dir, "x.tcap"), Tracefs: filepath.Join(empty, "none")}, "no tracefs"},
		{"something else mounted", Options{Command: []string{"true"}, Out: filepath.Join(dir, "x.tcap"), Tracefs: notTracefs}, "is not tracefs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.SkipRootCheck = true
			if tc.o.Tracefs == "" {
				tc.o.Tracefs = tfs
			}
			_, err := New(tc.o)
			if err == nil || !errors.Is(err, ErrCannotRun) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrCannotRun with %q", err, tc.want)
			}
		})
	}
}

func TestRunRefusesUnknownClock(t *testing.T) {
	tfs := fakeTracefs(t)
	before := settingsOf(t, tfs)
	c, err := New(Options{Command: []string{"true"}, Out: filepath.Join(t.TempDir(), "x.tcap"), Clock: "x86-tsc", Global: true,
		Tracefs: tfs, Proc: "../bundle/testdata/proc618", Root: fakeRoot(t, nil), SkipRootCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(); err == nil || !errors.Is(err, ErrCannotRun) || !strings.Contains(err.Error(), "local global counter mono") {
		t.Errorf("err = %v, want the kernel's clocks listed", err)
	}
	if after := settingsOf(t, tfs); !reflect.DeepEqual(after, before) {
		t.Errorf("settings changed: %v", after)
	}
}

func TestBufferSize(t *testing.T) {
	for _, tc := range []struct {
		asked, cpus int
		availKB     int64
		want        int
		note        string
	}{
		{0, 2, 24 << 20, DefaultBufferKB, ""},            // 64 MB of 24 GB
		{0, 2, 0, DefaultBufferKB, ""},                   // memory unknown
		{0, 256, 64 << 20, DefaultBufferKB, ""},          // 64 GB / 4 / 256 = 64 MB: the default fits
		{0, 256, 16 << 20, 16384, "more than a quarter"}, // 16 GB / 4 / 256
		{0, 64, 1 << 20, 4096, "more than a quarter"},
		{0, 512, 1 << 20, 1024, "more than a quarter"}, // never below 1 MB
		{4096, 2, 24 << 20, 4096, ""},
		{1 << 20, 16, 8 << 20, 1 << 20, "takes 16384 MB of the 8192 MB"},
	} {
		got, note := BufferSize(tc.asked, tc.cpus, tc.availKB)
		if got != tc.want || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("BufferSize(%d, %d, %d) = %d, %q; want %d, %q", tc.asked, tc.cpus, tc.availKB, got, note, tc.want, tc.note)
		}
	}
}
