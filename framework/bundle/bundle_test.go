package bundle

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() *Manifest {
	tm := 1
	return &Manifest{
		Tool: "test", Name: "cyclictest-t1", Command: []string{"cyclictest", "-t1", "-l", "10"},
		Start: time.Date(2026, 12, 7, 4, 0, 0, 123, time.UTC), WallNS: 12_000_000,
		Host: Host{Release: "6.18.44", CPUs: 2, Online: "0-1", HZ: 250, NoHZ: "idle", HighRes: true,
			TimerMigration: &tm, Clocksource: "kvm-clock", Clockevents: []string{"lapic-deadline", "lapic-deadline"},
			CPUIdle:        CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: []IdleState{{Name: "POLL"}, {Name: "haltpoll", LatencyUS: 1, ResidencyUS: 1}}},
			PMQoSLatencyUS: 2000000000},
		Trace: TraceInfo{Clock: "local", BufferKB: 8192, Events: []string{"timer/hrtimer_start"}, Lost: []Lost{{CPU: 0}, {CPU: 1, Overrun: 3}}},
	}
}

func TestWriteOpenRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "raw-trace")
	trace := strings.Repeat("          <idle>-0       [001] d..1.   150.307487: cpu_idle: state=1 cpu_id=1\n", 5000)
	if err := os.WriteFile(tracePath, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	m := sample()
	out := filepath.Join(dir, "c"+Ext)
	if err := Write(out, m, []Entry{{Name: TraceName, Path: tracePath}, {Name: StdoutName, Data: []byte("T: 0 ...\n")}, {Name: StderrName}}); err != nil {
		t.Fatal(err)
	}
	if !Sniff(out) {
		t.Error("Sniff: a written bundle is not recognised")
	}
	b, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Manifest, *m) {
		t.Errorf("manifest:\n got %+v\nwant %+v", b.Manifest, *m)
	}
	if got, want := b.Names(), []string{ManifestName, TraceName, StdoutName, StderrName}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	if b.Manifest.Trace.Total() != 3 {
		t.Errorf("lost total %d, want 3", b.Manifest.Trace.Total())
	}
	r, err := b.Trace()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != trace {
		t.Errorf("trace: %d bytes (err %v), want %d", len(got), err, len(trace))
	}
	if so, err := b.File(StdoutName); err != nil || string(so) != "T: 0 ...\n" {
		t.Errorf("stdout %q, %v", so, err)
	}
	if _, err := b.File("nope.txt"); err == nil || !strings.Contains(err.Error(), "no entry nope.txt") {
		t.Errorf("missing entry: %v", err)
	}

	// Same contents, same bytes: nothing of the writing moment goes in.
	out2 := filepath.Join(dir, "d"+Ext)
	if err := Write(out2, sample(), []Entry{{Name: TraceName, Path: tracePath}, {Name: StdoutName, Data: []byte("T: 0 ...\n")}, {Name: StderrName}}); err != nil {
		t.Fatal(err)
	}
	a1, _ := os.ReadFile(out)
	a2, _ := os.ReadFile(out2)
	if !bytes.Equal(a1, a2) {
		t.Error("two bundles of the same contents differ")
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "g"+Ext)
	if err := Write(good, sample(), []Entry{{Name: TraceName, Data: bytes.Repeat([]byte("x y z\n"), 100000)}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	plain := filepath.Join(dir, "trace.txt")
	os.WriteFile(plain, []byte("# tracer: nop\n"), 0o644)
	trunc := filepath.Join(dir, "t"+Ext)
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	for _, tc := range []struct {
		name, path, want string
		notBundle        bool
	}{
		{"plain trace", plain, "not a capture bundle", true},
		{"truncated", trunc, "truncated or damaged", false},
		{"missing", filepath.Join(dir, "none"), "no such file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want an error with %q", err, tc.want)
			}
			if errors.Is(err, ErrNotBundle) != tc.notBundle {
				t.Errorf("errors.Is(ErrNotBundle) = %v, want %v", !tc.notBundle, tc.notBundle)
			}
		})
	}
	if Sniff(plain) {
		t.Error("Sniff: a text trace taken for a bundle")
	}
}

func TestWriteKeepsOldFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c"+Ext)
	os.WriteFile(out, []byte("previous"), 0o644)
	err := Write(out, sample(), []Entry{{Name: TraceName, Path: filepath.Join(dir, "missing")}})
	if err == nil {
		t.Fatal("Write of a missing trace file succeeded")
	}
	if got, _ := os.ReadFile(out); string(got) != "previous" {
		t.Errorf("the previous file was replaced: %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}
