package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testdata/proc618 holds /proc/stat, /proc/interrupts and /proc/softirqs of a
// 2-CPU Linux 6.18 KVM guest.
func TestReadSnapshot(t *testing.T) {
	s, err := ReadSnapshot("testdata/proc618")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Stat) != 3 || s.Stat[0].CPU != -1 || s.Stat[1].CPU != 0 || s.Stat[2].CPU != 1 {
		t.Fatalf("stat cpus: %+v", s.Stat)
	}
	// show_stat() converts the machine's sum of nanoseconds once and each
	// CPU's on its own, so the machine line is the CPUs' sum within a tick
	// per CPU.
	if sum := s.Stat[1].User + s.Stat[2].User; s.Stat[0].User < sum || s.Stat[0].User > sum+2 {
		t.Errorf("machine user %d, CPUs' sum %d", s.Stat[0].User, sum)
	}
	loc := find(s.Interrupts, "LOC")
	if len(loc.PerCPU) != 2 || loc.Desc != "Local timer interrupts" {
		t.Errorf("LOC row: %+v", loc)
	}
	if err := find(s.Interrupts, "ERR"); len(err.PerCPU) != 1 {
		t.Errorf("ERR row (machine-wide, one count): %+v", err)
	}
	if timer := find(s.Softirqs, "TIMER"); len(timer.PerCPU) != 2 || timer.Desc != "" {
		t.Errorf("TIMER row: %+v", timer)
	}
}

func find(rows []Counter, name string) Counter {
	for _, c := range rows {
		if c.Name == name {
			return c
		}
	}
	return Counter{}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
		want          []CPUStat
	}{
		{"6.x", "cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 10 1 20 300 4 5 6 7 0 0\nintr 1 2\n", "",
			[]CPUStat{{CPU: -1, User: 10, Nice: 1, System: 20, Idle: 300, IOWait: 4, IRQ: 5, Softirq: 6, Steal: 7},
				{CPU: 0, User: 10, Nice: 1, System: 20, Idle: 300, IOWait: 4, IRQ: 5, Softirq: 6, Steal: 7}}},
		{"2.6 four times", "cpu 1 2 3 4\n", "", []CPUStat{{CPU: -1, User: 1, Nice: 2, System: 3, Idle: 4}}},
		{"bad count", "cpu 1 2 x 4\n", "line 1: cpu time 3", nil},
		{"too few", "cpu0 1 2\n", "at least 4", nil},
		{"bad cpu", "cpuX 1 2 3 4\n", "not a cpu line", nil},
		{"none", "intr 1\n", "no cpu lines", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestDeltas(t *testing.T) {
	before := []Counter{{Name: "LOC", PerCPU: []uint64{10, 20}}}
	after := []Counter{{Name: "LOC", PerCPU: []uint64{15, 20}}, {Name: "NEW", PerCPU: []uint64{3}}}
	if d := Delta(before, after, "LOC"); !reflect.DeepEqual(d, []uint64{5, 0}) {
		t.Errorf("LOC delta %v", d)
	}
	if d := Delta(before, after, "NEW"); !reflect.DeepEqual(d, []uint64{3}) {
		t.Errorf("NEW delta %v", d)
	}
	sd := StatDelta([]CPUStat{{CPU: 0, User: 5, Idle: 100}}, []CPUStat{{CPU: 0, User: 7, Idle: 150}, {CPU: 1}})
	if !reflect.DeepEqual(sd, []CPUStat{{CPU: 0, User: 2, Idle: 50}}) {
		t.Errorf("StatDelta %+v", sd)
	}
}

func FuzzParseCounters(f *testing.F) {
	f.Add("           CPU0       CPU1\nLOC:  1 2  Local timer interrupts\nERR: 0\n")
	f.Add("  CPU0\n   TIMER: 5\n")
	f.Add("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseCounters(strings.NewReader(in))
		if err == nil {
			for _, r := range rows {
				if strings.Contains(r.Name, ":") {
					t.Errorf("label %q holds a colon", r.Name)
				}
			}
		}
		st, err := ParseStat(strings.NewReader(in))
		if err == nil && len(st) == 0 {
			t.Error("ParseStat: no error and no lines")
		}
	})
}

// TestReadKernelThreads: the pids whose stat flags have PF_KTHREAD, in
// order; a comm with spaces and parentheses does not shift the fields,
// entries that are not pids are ignored, and a malformed stat names its
// file.
func TestReadKernelThreads(t *testing.T) {
	root := t.TempDir()
	write := func(pid, stat string) {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Real lines of a 6.18 guest: kthreadd, a kworker, bash, and a user
	// comm made to look like a kernel thread.
	write("2", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 3 0 0 20 0 1 0 3 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0")
	write("11708", "11708 (kworker/1:1-events) I 2 0 0 0 -1 69238880 0 0 0 0 0 6 0 0 20 0 1 0 1000 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0")
	write("4012", "4012 (bash) S 1 4012 4012 34816 4012 4194304 100 0 0 0 1 1 0 0 20 0 1 0 2000 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0")
	write("4013", "4013 (x) 1 (kworker) S 1 4013 4013 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 2001 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0")
	if err := os.WriteFile(filepath.Join(root, "stat"), []byte("cpu 1 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadKernelThreads(root)
	if err != nil || !reflect.DeepEqual(got, []int{2, 11708}) {
		t.Errorf("ReadKernelThreads = %v, %v; want [2 11708]", got, err)
	}
	write("5", "5 (broken) S 1")
	if _, err := ReadKernelThreads(root); err == nil || !strings.Contains(err.Error(), filepath.Join(root, "5", "stat")) {
		t.Errorf("a malformed stat: %v; want an error naming its file", err)
	}
}
