package capture

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tickemu/tickemu/framework/bundle"
)

// DefaultTracefs is where tracefs is mounted on every current distribution
// (the kernel creates the empty directory; before 4.1 tracefs lived under
// debugfs, /sys/kernel/debug/tracing).
const DefaultTracefs = "/sys/kernel/tracing"

// session changes tracefs settings and puts every one back: each write
// remembers the value before it, and Restore undoes them in reverse order,
// once, whoever calls it first (the capture when it ends, or a signal
// handler about to exit).
type session struct {
	mu       sync.Mutex
	root     string // tracefs
	prefix   string // "" for the top-level buffer, "instances/NAME/" for an instance
	changed  []bundle.Setting
	undo     []func() error
	restored bool
}

// dir is the buffer's directory (the top level or the instance).
func (s *session) dir() string { return filepath.Join(s.root, s.prefix) }

// file is the path of a file of the buffer.
func (s *session) file(rel string) string { return filepath.Join(s.root, s.prefix, rel) }

// read returns a tracefs file's value as it is written back: trace_clock's
// selected clock ("[mono] local ..." is "mono"), buffer_size_kb's size
// ("7 (expanded: 1408)" is 1408: the size the buffer takes once used), a pid
// list on one line, an event filter's "none" as "0".
func readSetting(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	switch filepath.Base(path) {
	case "trace_clock":
		for _, f := range strings.Fields(s) {
			if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
				return f[1 : len(f)-1], nil
			}
		}
		if f := strings.Fields(s); len(f) == 1 {
			return f[0], nil // one clock, as written (a copy of the file)
		}
		return "", fmt.Errorf("%s: no [selected] clock in %q", path, s)
	case "buffer_size_kb":
		if _, exp, ok := strings.Cut(s, "(expanded: "); ok {
			return strings.TrimSuffix(exp, ")"), nil
		}
	case "set_event_pid", "set_event_notrace_pid":
		return strings.Join(strings.Fields(s), " "), nil
	case "filter":
		if s == "none" {
			return "0", nil
		}
	case "enable":
		return strings.TrimSuffix(s, "*"), nil // "1*": soft mode
	}
	return s, nil
}

// write writes a tracefs setting. An empty value truncates the file, which
// is how a pid list is cleared.
func writeSetting(path, v string) error {
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		return fmt.Errorf("writing %q to %s: %w", v, path, err)
	}
	return nil
}

// set writes v to the buffer's file rel, remembering the old value, unless
// it already holds v.
func (s *session) set(rel, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restored {
		return errors.New("tracefs settings already restored")
	}
	path := s.file(rel)
	old, err := readSetting(path)
	if err != nil {
		return err
	}
	if old == v {
		return nil
	}
	if err := writeSetting(path, v); err != nil {
		return err
	}
	s.changed = append(s.changed, bundle.Setting{Path: s.prefix + rel, Old: old, New: v})
	s.undo = append(s.undo, func() error { return writeSetting(path, old) })
	return nil
}

// change makes a change that is not a file's value (creating the instance,
// mounting tracefs): do, recorded as st with undo to reverse it, under the
// session's lock so that a concurrent Restore either runs before it (and
// do is not done) or undoes it. do nil: the change is already made.
func (s *session) change(st bundle.Setting, do, undo func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restored {
		return errors.New("tracefs settings already restored")
	}
	if do != nil {
		if err := do(); err != nil {
			return err
		}
	}
	s.changed = append(s.changed, st)
	s.undo = append(s.undo, undo)
	return nil
}

// Changed is every change made so far.
func (s *session) Changed() []bundle.Setting {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bundle.Setting(nil), s.changed...)
}

// Restore undoes every change, newest first; the errors of the ones that
// failed are joined. Later calls do nothing.
func (s *session) Restore() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restored {
		return nil
	}
	s.restored = true
	var errs []error
	for i := len(s.undo) - 1; i >= 0; i-- {
		if err := s.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// formatOptions are the trace options that decide the text format replay
// reads; an instance starts with the top level's flags, so they are set in
// either case: no raw, hex or binary output, no latency format, the
// context (comm-pid, CPU, timestamp) and irq-info (the flags column)
// present, the tgid column, and an overwriting ring buffer (losses counted
// as overruns).
var formatOptions = []struct{ name, value string }{
	{"raw", "0"}, {"hex", "0"}, {"bin", "0"}, {"latency-format", "0"},
	{"context-info", "1"}, {"irq-info", "1"}, {"record-tgid", "1"}, {"overwrite", "1"},
}

// configure prepares the buffer for a capture of events: tracing off, the
// nop tracer, the text format's options, the clock, the buffer size, no pid
// filter, exactly the events given enabled (each with its filter from
// filters, or none), the buffer cleared.
func (s *session) configure(events []string, filters map[string]string, clock string, bufferKB int) error {
	steps := []struct{ rel, v string }{
		{"tracing_on", "0"},
		{"current_tracer", "nop"},
	}
	for _, o := range formatOptions {
		if _, err := os.Stat(s.file("options/" + o.name)); err == nil {
			steps = append(steps, struct{ rel, v string }{"options/" + o.name, o.value})
		}
	}
	steps = append(steps,
		struct{ rel, v string }{"trace_clock", clock},
		struct{ rel, v string }{"buffer_size_kb", strconv.Itoa(bufferKB)})
	for _, f := range []string{"set_event_pid", "set_event_notrace_pid"} {
		if _, err := os.Stat(s.file(f)); err == nil {
			steps = append(steps, struct{ rel, v string }{f, ""})
		}
	}
	for _, st := range steps {
		if err := s.set(st.rel, st.v); err != nil {
			return err
		}
	}
	// Events enabled before (the top-level buffer, or whatever an instance
	// inherited) that are not ours are switched off one by one, so each is
	// restored by name.
	want := map[string]bool{}
	for _, e := range events {
		want[e] = true
	}
	enabled, err := enabledEvents(s.file("set_event"))
	if err != nil {
		return err
	}
	for _, e := range enabled {
		if !want[e] {
			if err := s.set("events/"+e+"/enable", "0"); err != nil {
				return err
			}
		}
	}
	for _, e := range events {
		if _, err := os.Stat(s.file("events/" + e + "/filter")); err == nil {
			f := filters[e]
			if f == "" {
				f = "0" // no filter
			}
			if err := s.set("events/"+e+"/filter", f); err != nil {
				return err
			}
		}
		if err := s.set("events/"+e+"/enable", "1"); err != nil {
			return err
		}
	}
	return s.clear()
}

// clear empties the ring buffer (truncating `trace`).
func (s *session) clear() error {
	return writeSetting(s.file("trace"), "")
}

// enabledEvents reads set_event: one "group:name" per enabled event.
func enabledEvents(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if g, n, ok := strings.Cut(line, ":"); ok {
			out = append(out, g+"/"+n)
		}
	}
	return out, nil
}

// Clocks lists the trace clocks of a buffer (its trace_clock file).
func Clocks(traceClock string) ([]string, error) {
	b, err := os.ReadFile(traceClock)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range strings.Fields(string(b)) {
		out = append(out, strings.Trim(f, "[]"))
	}
	return out, nil
}

// readLost reads each CPU's losses from per_cpu/cpuN/stats: "overrun" (and
// "commit overrun") are events the ring buffer overwrote, "dropped events"
// ones it refused (with overwrite off); ring_buffer's stats in
// tracing_stats_read(), kernel/trace/trace.c. Only CPUs that lost
// something are listed.
func readLost(dir string) ([]bundle.Lost, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "per_cpu"))
	if err != nil {
		return nil, err
	}
	var out []bundle.Lost
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "cpu")
		if !ok {
			continue
		}
		cpu, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		path := filepath.Join(dir, "per_cpu", e.Name(), "stats")
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		l := bundle.Lost{CPU: cpu}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				continue // the timestamps ("oldest event ts: 12.345")
			}
			switch strings.TrimSpace(k) {
			case "overrun", "commit overrun":
				l.Overrun += x
			case "dropped events":
				l.Dropped += x
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if l.Overrun+l.Dropped > 0 {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CPU < out[j].CPU })
	return out, nil
}
