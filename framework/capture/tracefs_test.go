package capture

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
)

// fakeTracefs is a tracefs top level as a tree of plain files, in the state
// someone else left it: tracing on with the function tracer, the local
// clock, an unexpanded buffer, a pid filter, the raw format, two events
// enabled, one with a filter.
func fakeTracefs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, v := range map[string]string{
		"tracing_on":                          "1\n",
		"current_tracer":                      "function\n",
		"trace_clock":                         "[local] global counter mono\n",
		"buffer_size_kb":                      "7 (expanded: 1408)\n",
		"set_event":                           "sched:sched_switch\nirq:irq_handler_entry\n",
		"set_event_pid":                       "12\n34\n",
		"options/raw":                         "1\n",
		"options/record-tgid":                 "0\n",
		"options/irq-info":                    "1\n",
		"options/overwrite":                   "1\n",
		"events/sched/sched_switch/enable":    "1\n",
		"events/sched/sched_switch/filter":    "prev_pid == 1\n",
		"events/irq/irq_handler_entry/enable": "1*\n",
		"events/irq/irq_handler_entry/filter": "none\n",
		"events/timer/hrtimer_start/enable":   "0\n",
		"events/timer/hrtimer_start/filter":   "none\n",
		"trace":                               "# tracer: function\nold contents\n",
		"per_cpu/cpu0/stats":                  "entries: 5\noverrun: 0\ncommit overrun: 0\nbytes: 100\noldest event ts:   150.307228\nnow ts:  1002.877125\ndropped events: 0\nread events: 0\n",
		"per_cpu/cpu1/stats":                  "entries: 5\noverrun: 120\ncommit overrun: 3\nbytes: 100\noldest event ts:   150.307228\nnow ts:  1002.877125\ndropped events: 7\nread events: 0\n",
	} {
		write(t, root, p, v)
	}
	return root
}

// settingsOf reads every file of a fake tracefs except the buffer, as its
// setting (readSetting), so that a restored "local" equals the kernel's
// "[local] global ..." listing.
func settingsOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "trace" || strings.HasPrefix(rel, "per_cpu/") || rel == "set_event" {
			return nil
		}
		v, err := readSetting(p)
		out[rel] = v
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSessionRestores(t *testing.T) {
	root := fakeTracefs(t)
	before := settingsOf(t, root)
	s := &session{root: root}
	if err := s.configure([]string{"timer/hrtimer_start", "sched/sched_switch"}, map[string]string{"timer/hrtimer_start": "function == 0x1"}, "mono", 4096); err != nil {
		t.Fatal(err)
	}
	during := settingsOf(t, root)
	for p, want := range map[string]string{
		"tracing_on": "0", "current_tracer": "nop", "trace_clock": "mono", "buffer_size_kb": "4096", "set_event_pid": "",
		"options/raw": "0", "options/record-tgid": "1", "options/irq-info": "1",
		"events/sched/sched_switch/enable": "1", "events/sched/sched_switch/filter": "0",
		"events/timer/hrtimer_start/enable": "1", "events/irq/irq_handler_entry/enable": "0",
	} {
		if during[p] != want {
			t.Errorf("during the capture %s = %q, want %q", p, during[p], want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "trace")); len(b) != 0 {
		t.Errorf("trace not cleared: %q", b)
	}
	wantChanged := []bundle.Setting{
		{Path: "tracing_on", Old: "1", New: "0"},
		{Path: "current_tracer", Old: "function", New: "nop"},
		{Path: "options/raw", Old: "1", New: "0"},
		{Path: "options/record-tgid", Old: "0", New: "1"},
		{Path: "trace_clock", Old: "local", New: "mono"},
		{Path: "buffer_size_kb", Old: "1408", New: "4096"},
		{Path: "set_event_pid", Old: "12 34", New: ""},
		{Path: "events/irq/irq_handler_entry/enable", Old: "1", New: "0"},
		{Path: "events/timer/hrtimer_start/filter", Old: "0", New: "function == 0x1"},
		{Path: "events/timer/hrtimer_start/enable", Old: "0", New: "1"},
		{Path: "events/sched/sched_switch/filter", Old: "prev_pid == 1", New: "0"},
	}
	if got := s.Changed(); !reflect.DeepEqual(got, wantChanged) {
		t.Errorf("changed =\n%+v\nwant\n%+v", got, wantChanged)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if after := settingsOf(t, root); !reflect.DeepEqual(after, before) {
		t.Errorf("after restore\n%v\nwant\n%v", after, before)
	}
	// Restoring twice (a signal handler and the capture) writes nothing.
	write(t, root, "tracing_on", "0\n")
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if v, _ := readSetting(filepath.Join(root, "tracing_on")); v != "0" {
		t.Errorf("a second Restore wrote tracing_on again (%q)", v)
	}
	if err := s.set("tracing_on", "1"); err == nil {
		t.Error("a change after Restore is accepted")
	}
}

func TestSessionRestoresAfterFailure(t *testing.T) {
	root := fakeTracefs(t)
	before := settingsOf(t, root)
	// An event whose enable file is missing fails half-way through.
	s := &session{root: root}
	if err := s.configure([]string{"timer/hrtimer_start", "timer/nosuch"}, nil, "mono", 4096); err == nil {
		t.Fatal("configure succeeded with a missing event")
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if after := settingsOf(t, root); !reflect.DeepEqual(after, before) {
		t.Errorf("after a failed configure and restore\n%v\nwant\n%v", after, before)
	}
}

func TestReadLost(t *testing.T) {
	root := fakeTracefs(t)
	got, err := readLost(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []bundle.Lost{{CPU: 1, Overrun: 123, Dropped: 7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v want %+v", got, want)
	}
}

func TestEventName(t *testing.T) {
	for line, want := range map[string]string{
		"      tk-capture-30261   (  30247) [000] .....   762.200905: hrtimer_setup: hrtimer=0000000075d11f98": "hrtimer_setup",
		"          <idle>-0       [001] d.h1.  123.456789: local_timer_entry: vector=236":                      "local_timer_entry",
		"  cyclictest-123 [001] 1234.5: sched_switch: prev_comm=cyclictest":                                    "sched_switch",
		"# tracer: nop": "",
		"garbage":       "",
	} {
		if got := eventName(line); got != want {
			t.Errorf("eventName(%q) = %q, want %q", line, got, want)
		}
	}
}
