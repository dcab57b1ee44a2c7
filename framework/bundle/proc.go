package bundle

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ReadSnapshot reads /proc/stat, /proc/interrupts and /proc/softirqs under
// root ("/proc" on a live system; a directory of copies in tests).
func ReadSnapshot(root string) (Snapshot, error) {
	var s Snapshot
	var err error
	read := func(name string, parse func(io.Reader) error) {
		if err != nil {
			return
		}
		f, oerr := os.Open(filepath.Join(root, name))
		if oerr != nil {
			err = oerr
			return
		}
		defer f.Close()
		if perr := parse(io.LimitReader(f, MaxFile)); perr != nil {
			err = fmt.Errorf("%s: %w", filepath.Join(root, name), perr)
		}
	}
	read("stat", func(r io.Reader) (e error) { s.Stat, e = ParseStat(r); return })
	read("interrupts", func(r io.Reader) (e error) { s.Interrupts, e = ParseCounters(r); return })
	read("softirqs", func(r io.Reader) (e error) { s.Softirqs, e = ParseCounters(r); return })
	return s, err
}

// ParseStat reads the cpu lines of /proc/stat (show_stat(), fs/proc/stat.c):
// "cpu" for the machine, then "cpuN" per CPU, each with up to ten times in
// USER_HZ ticks (older kernels print fewer: the rest stay 0).
func ParseStat(r io.Reader) ([]CPUStat, error) {
	var out []CPUStat
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		st := CPUStat{CPU: -1}
		if f[0] != "cpu" {
			c, err := strconv.Atoi(f[0][3:])
			if err != nil || c < 0 {
				return nil, fmt.Errorf("line %d: %q is not a cpu line", n, f[0])
			}
			st.CPU = c
		}
		fields := []*uint64{&st.User, &st.Nice, &st.System, &st.Idle, &st.IOWait, &st.IRQ, &st.Softirq, &st.Steal, &st.Guest, &st.GuestNice}
		if len(f) < 5 {
			return nil, fmt.Errorf("line %d: %s has %d times, want at least 4", n, f[0], len(f)-1)
		}
		for i, v := range f[1:] {
			if i == len(fields) {
				break
			}
			x, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s time %d: %q is not a count", n, f[0], i+1, v)
			}
			*fields[i] = x
		}
		out = append(out, st)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cpu lines")
	}
	return out, nil
}

// ParseCounters reads /proc/interrupts or /proc/softirqs: a header naming
// the CPUs ("CPU0 CPU1 ..."), then one row per source, "LABEL: counts...
// description" (show_interrupts(), arch_show_interrupts(), show_softirqs()).
// A row with fewer counts than CPUs (x86's ERR: and MIS:, machine-wide) keeps
// the counts it has.
func ParseCounters(r io.Reader) ([]Counter, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ncpu := -1
	var out []Counter
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if ncpu < 0 {
			for _, f := range strings.Fields(line) {
				if !strings.HasPrefix(f, "CPU") {
					return nil, fmt.Errorf("line %d: header %q: want a CPU column name (CPU0) per CPU", n, line)
				}
				ncpu++
			}
			ncpu++
			continue
		}
		label, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %q has no label (a name and a colon)", n, line)
		}
		c := Counter{Name: strings.TrimSpace(label)}
		f := strings.Fields(rest)
		i := 0
		for ; i < len(f) && i < ncpu; i++ {
			x, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				break
			}
			c.PerCPU = append(c.PerCPU, x)
		}
		c.Desc = strings.Join(f[i:], " ")
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ncpu < 0 {
		return nil, fmt.Errorf("empty")
	}
	return out, nil
}

// Delta is what a counter row grew by from before to after, per CPU; a row
// missing before counts from 0.
func Delta(before, after []Counter, name string) []uint64 {
	var b, a Counter
	for _, c := range before {
		if c.Name == name {
			b = c
		}
	}
	for _, c := range after {
		if c.Name == name {
			a = c
		}
	}
	d := make([]uint64, len(a.PerCPU))
	for i, v := range a.PerCPU {
		if i < len(b.PerCPU) && b.PerCPU[i] <= v {
			d[i] = v - b.PerCPU[i]
		} else if i >= len(b.PerCPU) {
			d[i] = v
		}
	}
	return d
}

// StatDelta is the /proc/stat times from before to after per CPU line (CPU
// -1 the machine), in USER_HZ ticks.
func StatDelta(before, after []CPUStat) []CPUStat {
	var out []CPUStat
	for _, a := range after {
		for _, b := range before {
			if b.CPU != a.CPU {
				continue
			}
			sub := func(x, y uint64) uint64 {
				if x < y {
					return 0
				}
				return x - y
			}
			out = append(out, CPUStat{CPU: a.CPU,
				User: sub(a.User, b.User), Nice: sub(a.Nice, b.Nice), System: sub(a.System, b.System),
				Idle: sub(a.Idle, b.Idle), IOWait: sub(a.IOWait, b.IOWait), IRQ: sub(a.IRQ, b.IRQ),
				Softirq: sub(a.Softirq, b.Softirq), Steal: sub(a.Steal, b.Steal),
				Guest: sub(a.Guest, b.Guest), GuestNice: sub(a.GuestNice, b.GuestNice)})
		}
	}
	return out
}

// pfKthread is PF_KTHREAD (include/linux/sched.h): the task is a kernel
// thread.
const pfKthread = 0x00200000

// ReadKernelThreads lists the pids under root (a /proc) whose stat flags
// have PF_KTHREAD, in increasing order. A process that exits while it is
// read is skipped.
func ReadKernelThreads(root string) ([]int, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		flags, err := statFlags(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(root, e.Name(), "stat"), err)
		}
		if flags&pfKthread != 0 {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out, nil
}

// statFlags is field 9 (flags) of a /proc/PID/stat line: the fields after
// the comm's closing parenthesis (a comm may hold spaces and parentheses)
// are state, ppid, pgrp, session, tty_nr, tpgid, flags.
func statFlags(line string) (uint64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("no comm in %q", line)
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 7 {
		return 0, fmt.Errorf("%d fields after the comm, want at least 7 (state .. flags)", len(f))
	}
	v, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("flags %q: %v", f[6], err)
	}
	return v, nil
}
