package cpuwait

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Procs reads the samples of processes pids from /proc (Linux), each with
// all its threads; with group, also of every other process in the process
// group each of them leads (a plugin started through a wrapper: its
// interpreter, its children).
func Procs(group bool, pids ...int) Reader {
	return func() (Sample, bool) {
		var s Sample
		for _, pid := range pids {
			if !addProc(&s, pid) {
				return Sample{}, false
			}
			if !group {
				continue
			}
			for _, m := range groupMembers(pid) {
				addProc(&s, m) // one may have ended meanwhile
			}
		}
		return s, true
	}
}

// addProc adds pid's threads' run-queue wait and whether it is stopped to s;
// false when its schedstat cannot be read.
func addProc(s *Sample, pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return false
	}
	state, _, ok := statFields(stat)
	if !ok {
		return false
	}
	if state == 'T' || state == 't' {
		s.Stopped = true
	}
	tasks, _ := filepath.Glob(filepath.Join(dir, "task", "*", "schedstat"))
	read := false
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		w, ok := ParseSchedstat(b)
		if !ok {
			return false
		}
		s.Wait += w
		read = true
	}
	return read
}

// ParseSchedstat returns the run-queue wait of /proc/PID/task/TID/schedstat:
// "on-cpu-ns wait-ns timeslices" (proc_pid_schedstat(), fs/proc/base.c).
func ParseSchedstat(b []byte) (time.Duration, bool) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	w, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || w < 0 {
		return 0, false
	}
	return time.Duration(w), true
}

// statFields returns the state and the process group of /proc/PID/stat:
// "pid (comm) state ppid pgrp ...", comm possibly holding spaces and
// parentheses (do_task_stat(), fs/proc/array.c).
func statFields(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pgrp, true
}

// groupMembers lists the processes of process group pgid other than pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if _, g, ok := statFields(b); ok && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}
