package trace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
)

// recordedFormats are the format files of a real kernel under
// testdata/formats/linux-6.18.44 (README.md there says where they come
// from), by event name: each field line after the common ones.
func recordedFormats(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("testdata", "formats", "linux-6.18.44", "events")
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "format"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recorded formats under %s (%v)", root, err)
	}
	out := map[string][]string{}
	for _, p := range paths {
		name, fields := parseFormat(t, p)
		out[name] = fields
	}
	return out
}

// parseFormat reads a tracefs format file: its name and its field lines
// ("void * hrtimer offset:8 size:8 signed:0"), without the common_ fields.
func parseFormat(t *testing.T, path string) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var fields []string
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if n, ok := strings.CutPrefix(l, "name: "); ok {
			name = n
			continue
		}
		f, ok := strings.CutPrefix(l, "field:")
		if !ok {
			continue
		}
		parts := strings.Split(f, ";")
		if len(parts) < 4 {
			t.Fatalf("%s:%d: field line %q: want decl;offset;size;signed", path, i+1, l)
		}
		if strings.Contains(parts[0], " common_") {
			continue
		}
		for j := range parts {
			parts[j] = strings.TrimSpace(parts[j])
		}
		fields = append(fields, strings.Join(parts[:4], " "))
	}
	if name == "" || len(fields) == 0 {
		t.Fatalf("%s: no name or no fields", path)
	}
	return name, fields
}

// modelFields is the field lines of the model's trace.dat format e, as
// parseFormat reads them.
func modelFields(t *testing.T, e *datEvent) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "format")
	if err := os.WriteFile(path, []byte(e.formatText()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, f := parseFormat(t, path)
	return f
}

// TestFormatsMatchRecordedKernel holds the event formats tickemu declares
// (trace.dat's, whose fields the text trace prints) to those of a real
// kernel: Linux 6.18.44, modelled as release 6.18.44 (hrtimer_setup since
// 6.15, and hrtimer_start's was_armed, f2e388a019e4, backported:
// WasArmedEras), whose tracepoints are those of the newest modelled
// release. Every event the model emits has a recorded format with the same
// fields, types, offsets, sizes and signedness; the older releases differ
// from it by exactly the changes ABIAt names. A field added or renamed on
// either side fails here.
func TestFormatsMatchRecordedKernel(t *testing.T) {
	rec := recordedFormats(t)
	recorded, err := eras.Parse("6.18.44")
	if err != nil {
		t.Fatal(err)
	}
	newest := datFormats(ABIAt(recorded))
	if a, b := ABIAt(recorded), ABIAt(eras.Newest); a.TickFunction != b.TickFunction || a.HRSetup != b.HRSetup || a.WasArmed != b.WasArmed {
		t.Errorf("ABI at 6.18.44 %+v, at %s %+v: want the same tracepoints", a, eras.Newest, b)
	}
	for _, name := range Known {
		if name == "function" || name == EventHRInit {
			continue // function is the function tracer's, not a tracepoint; hrtimer_init: below
		}
		want, ok := rec[name]
		if !ok {
			t.Errorf("%s: no recorded format: record it from /sys/kernel/tracing/events/*/%s/format into testdata/formats", name, name)
			continue
		}
		e := newest[name]
		if e == nil {
			t.Errorf("%s: the model emits it but declares no trace.dat format", name)
			continue
		}
		if got := modelFields(t, e); !slices.Equal(got, want) {
			t.Errorf("%s at %s: fields\n got %q\nwant %q (the recorded kernel's)", name, recorded, got, want)
		}
	}
	for name := range rec {
		if newest[name] == nil {
			t.Errorf("%s: recorded, but the model declares no format for it", name)
		}
	}

	// Before 6.15 the event is hrtimer_init, with hrtimer_setup's fields.
	if a := ABIAt(eras.Release{Major: 6, Minor: 14}); a.HRSetup != EventHRInit {
		t.Errorf("6.14 names hrtimer_setup()'s event %s, want %s", a.HRSetup, EventHRInit)
	}
	if got := modelFields(t, datFormats(ABIAt(eras.Oldest))[EventHRInit]); !slices.Equal(got, rec[EventHRSetup]) {
		t.Errorf("hrtimer_init fields %q, want hrtimer_setup's %q", got, rec[EventHRSetup])
	}
	// Before 7.1 hrtimer_start has every field but was_armed.
	var noArmed []string
	for _, f := range rec["hrtimer_start"] {
		if !strings.Contains(f, " was_armed ") {
			noArmed = append(noArmed, f)
		}
	}
	if len(noArmed) != len(rec["hrtimer_start"])-1 {
		t.Fatalf("recorded hrtimer_start has no was_armed field: %q", rec["hrtimer_start"])
	}
	for _, r := range []eras.Release{{Major: 7, Minor: 0}, recorded.Series(), {Major: 6, Minor: 18, Patch: 43}} {
		if got := modelFields(t, datFormats(ABIAt(r))["hrtimer_start"]); !slices.Equal(got, noArmed) {
			t.Errorf("hrtimer_start at %s: fields %q, want %q", r, got, noArmed)
		}
	}
}

// TestABIEras holds the ABI's history to the rules of a strategy
// attribute's eras (eras.Check): releases in order, commits and titles,
// backports to older series.
func TestABIEras(t *testing.T) {
	for name, a := range map[string]sdk.Attribute{
		"TickFunctionEras": {Name: "tick_function", Type: sdk.TypeString, OneOf: []string{"tick_sched_timer", "tick_nohz_highres_handler", "tick_nohz_handler"}, Eras: TickFunctionEras},
		"HRSetupEras":      {Name: "hrtimer_setup_event", Type: sdk.TypeString, OneOf: []string{EventHRInit, EventHRSetup}, Eras: HRSetupEras},
		"WasArmedEras":     {Name: "was_armed", Type: sdk.TypeBool, Eras: WasArmedEras},
	} {
		if err := eras.Check(a); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestABIAt checks the releases each naming change starts at.
func TestABIAt(t *testing.T) {
	for _, c := range []struct {
		rel      string
		tick     string
		setup    string
		wasArmed bool
	}{
		{"3.10", "tick_sched_timer", EventHRInit, false},
		{"6.6", "tick_sched_timer", EventHRInit, false},
		{"6.7", "tick_nohz_highres_handler", EventHRInit, false},
		{"6.8", "tick_nohz_highres_handler", EventHRInit, false},
		{"6.9", "tick_nohz_handler", EventHRInit, false},
		{"6.15", "tick_nohz_handler", EventHRSetup, false},
		{"7.0", "tick_nohz_handler", EventHRSetup, false},
		{"7.1", "tick_nohz_handler", EventHRSetup, true},
		{"7.1.3", "tick_nohz_handler", EventHRSetup, true},
		{"", "tick_nohz_handler", EventHRSetup, true}, // no version: the newest
		// f2e388a019e4 in the 6.18 stable series (WasArmedEras): 6.18 is
		// the series' first release, without it; 6.18.44 prints it.
		{"6.18", "tick_nohz_handler", EventHRSetup, false},
		{"6.18.43", "tick_nohz_handler", EventHRSetup, false},
		{"6.18.44", "tick_nohz_handler", EventHRSetup, true},
		{"6.18.90", "tick_nohz_handler", EventHRSetup, true},
		{"6.19", "tick_nohz_handler", EventHRSetup, false},
		{"6.12.44", "tick_nohz_handler", EventHRInit, false},
	} {
		var r eras.Release
		if c.rel != "" {
			var err error
			if r, err = eras.Parse(c.rel); err != nil {
				t.Fatal(err)
			}
		}
		a := ABIAt(r)
		if a.TickFunction != c.tick || a.HRSetup != c.setup || a.WasArmed != c.wasArmed {
			t.Errorf("ABIAt(%q) = %+v, want tick %s, %s, was_armed %v", c.rel, a, c.tick, c.setup, c.wasArmed)
		}
	}
}
