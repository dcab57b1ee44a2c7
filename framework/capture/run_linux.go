//go:build linux

package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickemu/tickemu/framework/bundle"
)

// Capture is one capture, from its checks to its bundle. New checks
// everything that can be checked without changing the system; Run does the
// rest. Interrupt and Abort may be called from a signal handler meanwhile.
type Capture struct {
	o       Options
	items   []eventItem
	mounted bool // tracefs was mounted by New's check (unmounted by Restore)

	mu          sync.Mutex
	sess        *session
	cmd         *exec.Cmd
	interrupted os.Signal
	aborted     bool
	killTimer   *time.Timer
}

// New checks a capture's options and the system: root, tracefs (mounting it
// when its directory is empty), the events list, the output path. Errors
// wrap ErrCannotRun.
func New(o Options) (*Capture, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrCannotRun, fmt.Sprintf(format, a...))
	}
	if len(o.Command) == 0 {
		return nil, bad("no command: tickemu capture [flags] -- COMMAND [ARG...]")
	}
	if o.Tracefs == "" {
		o.Tracefs = DefaultTracefs
	}
	if !o.SkipRootCheck && os.Geteuid() != 0 {
		return nil, bad("tickemu capture needs root: the trace events it enables are kernel-wide and live in tracefs (%s), which only root may change; run it with sudo", o.Tracefs)
	}
	if _, err := exec.LookPath(o.Command[0]); err != nil {
		return nil, bad("%v", err)
	}
	if o.Name == "" {
		o.Name = filepath.Base(o.Command[0])
	}
	if o.Out == "" {
		o.Out = o.Name + bundle.Ext
	}
	if o.BufferKB < 0 {
		return nil, bad("--buffer-kb %d: want a positive size", o.BufferKB)
	}
	if o.Clock == "" {
		o.Clock = DefaultClock
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	// The command's output is copied by goroutines of os/exec while the
	// capture logs: one lock for the three, which may be one writer.
	var mu sync.Mutex
	o.Stdout, o.Stderr, o.Log = locked(&mu, o.Stdout), locked(&mu, o.Stderr), locked(&mu, o.Log)
	items, err := ParseEvents(o.Events)
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := checkOut(o.Out, o.Command); err != nil {
		return nil, bad("%v", err)
	}
	c := &Capture{o: o, items: items}
	if err := c.findTracefs(); err != nil {
		return nil, bad("%v", err)
	}
	return c, nil
}

// checkOut refuses an output path that is one of the command's arguments
// (the capture would overwrite the workload's input) or whose directory
// cannot be written.
func checkOut(out string, command []string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	outSt, outErr := os.Stat(abs)
	if outErr == nil && outSt.IsDir() {
		return fmt.Errorf("--out %s is a directory", out)
	}
	args := append([]string(nil), command...)
	if p, err := exec.LookPath(command[0]); err == nil {
		args = append(args, p)
	}
	for _, a := range args {
		for _, cand := range []string{a, strings.TrimLeft(a[strings.IndexByte(a, '=')+1:], " ")} {
			if cand == "" {
				continue
			}
			ca, err := filepath.Abs(cand)
			if err != nil {
				continue
			}
			same := ca == abs
			if !same && outErr == nil {
				if st, err := os.Stat(ca); err == nil && os.SameFile(st, outSt) {
					same = true
				}
			}
			if same {
				return fmt.Errorf("--out %s is also the command's argument %q: the bundle would overwrite the workload's input", out, a)
			}
		}
	}
	dir := filepath.Dir(abs)
	f, err := os.CreateTemp(dir, ".tickemu-capture-check-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot write in %s: %v", out, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// findTracefs checks that tracefs is at o.Tracefs and mounts it there when
// the directory is empty (the kernel creates it for the mount).
func (c *Capture) findTracefs() error {
	dir := c.o.Tracefs
	if _, err := os.Stat(filepath.Join(dir, "trace")); err == nil {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		if _, lerr := os.Stat("/sys/kernel/debug/tracing/trace"); lerr == nil && dir == DefaultTracefs {
			c.o.Tracefs = "/sys/kernel/debug/tracing" // before 4.1: tracefs inside debugfs
			return nil
		}
		return fmt.Errorf("no tracefs: %s does not exist (a kernel built without CONFIG_FTRACE, or /sys not mounted); mount it with: mount -t tracefs nodev %s", dir, DefaultTracefs)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) > 0 {
		return fmt.Errorf("%s is not tracefs (it has no trace file but holds %s); mount tracefs there: mount -t tracefs nodev %s", dir, ents[0].Name(), dir)
	}
	if err := unix.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		return fmt.Errorf("tracefs is not mounted at %s and mounting it failed: %v (mount -t tracefs nodev %s)", dir, err, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "trace")); err != nil {
		unix.Unmount(dir, 0)
		return fmt.Errorf("mounted tracefs at %s but it has no trace file: %v", dir, err)
	}
	c.mounted = true
	return nil
}

// Interrupt passes a signal to the command's process group (the first
// time; the group is killed KillAfter later if it is still there). Before
// the command started it makes Run stop there.
func (c *Capture) Interrupt(s os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.interrupted != nil {
		return
	}
	c.interrupted = s
	if c.cmd != nil && c.cmd.Process != nil {
		pgid := c.cmd.Process.Pid
		if sig, ok := s.(syscall.Signal); ok {
			_ = syscall.Kill(-pgid, sig)
		}
		c.killTimer = time.AfterFunc(KillAfter, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	}
}

// Abort kills the command's process group and restores every setting at
// once: for a handler about to exit the process. Run then fails.
func (c *Capture) Abort() {
	c.mu.Lock()
	c.aborted = true
	if c.cmd != nil && c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	sess := c.sess
	mounted := c.mounted
	c.mounted = false
	c.mu.Unlock()
	if sess != nil {
		_ = sess.Restore()
	}
	if mounted {
		_ = unix.Unmount(c.o.Tracefs, 0)
	}
}

// Run records the capture and writes the bundle. The settings are restored
// before it returns, whatever happens.
func (c *Capture) Run() (res *Result, err error) {
	o := c.o
	sess := &session{root: o.Tracefs}
	c.mu.Lock()
	c.sess = sess
	if c.mounted {
		_ = sess.change(bundle.Setting{Path: o.Tracefs, Old: "not mounted", New: "tracefs"}, nil, func() error { return unix.Unmount(o.Tracefs, 0) })
		c.mounted = false // Restore unmounts now
	}
	aborted := c.aborted
	c.mu.Unlock()
	defer func() {
		if rerr := sess.Restore(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restoring the tracefs settings: %w", rerr))
		}
	}()
	if aborted {
		return nil, errors.New("aborted")
	}
	res = &Result{}
	tmp, err := os.MkdirTemp("", "tickemu-capture-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	// The buffer: a private instance unless --global or the kernel has none.
	global := o.Global
	if !global {
		if _, err := os.Stat(filepath.Join(o.Tracefs, "instances")); err != nil {
			fmt.Fprintf(o.Log, "tickemu: capture: %s has no instances directory: using the top-level buffer (its settings are saved and restored)\n", o.Tracefs)
			global = true
		}
	}
	instance := ""
	if !global {
		instance = fmt.Sprintf("tickemu-%d", os.Getpid())
		dir := filepath.Join(o.Tracefs, "instances", instance)
		err := sess.change(bundle.Setting{Path: "instances/" + instance, Old: "absent", New: "created"},
			func() error {
				if err := os.Mkdir(dir, 0o755); err != nil {
					return fmt.Errorf("creating the trace instance: %w (a stale one from a killed capture? rmdir %s)", err, dir)
				}
				return nil
			},
			func() error {
				if err := os.Remove(dir); err != nil && !isNotExist(err) {
					return err
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		sess.prefix = "instances/" + instance + "/"
	}

	available, err := Available(sess.file("events"))
	if err != nil {
		return nil, err
	}
	events, missing := Resolve(available, c.items)
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: none of the events asked for is in this kernel (missing: %s)", ErrCannotRun, strings.Join(missing, ", "))
	}
	clocks, err := Clocks(sess.file("trace_clock"))
	if err != nil {
		return nil, err
	}
	if !contains(clocks, o.Clock) {
		return nil, fmt.Errorf("%w: --clock %s: this kernel's trace clocks are %s", ErrCannotRun, o.Clock, strings.Join(clocks, " "))
	}
	filters := map[string]string{}
	for _, e := range events {
		if f := Filters[e]; f != "" {
			filters[e] = f
		}
	}
	cpuDirs, _ := filepath.Glob(sess.file("per_cpu/cpu*"))
	bufferKB, note := BufferSize(o.BufferKB, len(cpuDirs), memAvailableKB(filepath.Join(o.Proc, "meminfo")))
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	o.BufferKB = bufferKB
	if err := sess.configure(events, filters, o.Clock, o.BufferKB); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		res.Notes = append(res.Notes, "events this kernel does not have: "+strings.Join(missing, ", "))
	}

	host, notes, herr := ReadHost(o.Root, hypervisorVendor())
	res.Notes = append(res.Notes, notes...)
	if herr != nil {
		res.Notes = append(res.Notes, "reading the host's facts: "+herr.Error())
	}
	m := &bundle.Manifest{
		Tool: o.Tool, Name: o.Name, Note: o.Note, Command: o.Command, Host: host,
		Trace: bundle.TraceInfo{Clock: o.Clock, BufferKB: o.BufferKB, Instance: instance, Events: events, Missing: missing, Filters: filters},
	}
	if m.Trace.Missing == nil {
		m.Trace.Missing = []string{}
	}

	stdoutPath, stderrPath := filepath.Join(tmp, bundle.StdoutName), filepath.Join(tmp, bundle.StderrName)
	outF, err := os.Create(stdoutPath)
	if err != nil {
		return nil, err
	}
	defer outF.Close()
	errF, err := os.Create(stderrPath)
	if err != nil {
		return nil, err
	}
	defer errF.Close()
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = tee(outF, o.Stdout), tee(errF, o.Stderr)
	// Its own process group, so a signal reaches the whole workload (stress-ng's
	// workers) and nothing of it survives; killed with tickemu.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second // a grandchild holding the output pipes open

	if m.Before, err = bundle.ReadSnapshot(o.Proc); err != nil {
		return nil, err
	}
	// The kernel threads alive now and at the end: which of the trace's
	// tasks the kernel charges to system (a replay runs them so).
	kthreads, err := bundle.ReadKernelThreads(o.Proc)
	if err != nil {
		return nil, err
	}
	if err := sess.set("tracing_on", "1"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.interrupted != nil || c.aborted {
		s := c.interrupted
		c.mu.Unlock()
		return nil, fmt.Errorf("interrupted (%v) before the command started", s)
	}
	m.Start = time.Now()
	err = cmd.Start()
	if err == nil {
		c.cmd = cmd
	}
	c.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrCannotRun, o.Command[0], err)
	}
	m.PID, m.CapturePID = cmd.Process.Pid, os.Getpid()
	fmt.Fprintf(o.Log, "tickemu: capture: tracing %d events; running %s (pid %d)\n", len(events), strings.Join(o.Command, " "), cmd.Process.Pid)
	waitErr := cmd.Wait()
	m.WallNS = time.Since(m.Start).Nanoseconds()
	// Whatever the command left in its group goes with it.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err := writeSetting(sess.file("tracing_on"), "0"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.killTimer != nil {
		c.killTimer.Stop()
	}
	res.Interrupted = c.interrupted
	aborted = c.aborted
	c.mu.Unlock()
	if aborted {
		return nil, errors.New("aborted")
	}
	if st := cmd.ProcessState; st != nil {
		m.ExitStatus = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			m.ExitStatus, m.Signal = -1, unix.SignalName(ws.Signal())
		}
	} else if waitErr != nil {
		return nil, fmt.Errorf("waiting for %s: %w", o.Command[0], waitErr)
	}
	if m.After, err = bundle.ReadSnapshot(o.Proc); err != nil {
		return nil, err
	}
	after, err := bundle.ReadKernelThreads(o.Proc)
	if err != nil {
		return nil, err
	}
	m.KernelThreads = mergeSorted(kthreads, after)
	if m.Trace.Lost, err = readLost(sess.dir()); err != nil {
		return nil, err
	}
	if n := m.Trace.Total(); n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the trace lost %d events (ring buffer full): its counts are below what the kernel did; raise --buffer-kb (now %d per CPU) or shorten the run", n, o.BufferKB))
	}
	tracePath := filepath.Join(tmp, bundle.TraceName)
	if res.TraceLen, err = copyTrace(sess.file("trace"), tracePath); err != nil {
		return nil, err
	}
	m.Changed = sess.Changed()
	// The settings go back before the bundle is written: the trace is copied.
	if rerr := sess.Restore(); rerr != nil {
		return nil, fmt.Errorf("restoring the tracefs settings: %w", rerr)
	}
	if res.Counts, err = countEvents(tracePath); err != nil {
		return nil, err
	}
	if err := outF.Close(); err != nil {
		return nil, err
	}
	if err := errF.Close(); err != nil {
		return nil, err
	}
	err = bundle.Write(o.Out, m, []bundle.Entry{
		{Name: bundle.TraceName, Path: tracePath},
		{Name: bundle.StdoutName, Path: stdoutPath},
		{Name: bundle.StderrName, Path: stderrPath},
	})
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", o.Out, err)
	}
	st, err := os.Stat(o.Out)
	if err != nil {
		return nil, err
	}
	res.Manifest, res.Path, res.Size = m, o.Out, st.Size()
	return res, nil
}

// lockedWriter serialises writes to w with a lock shared with other writers.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func locked(mu *sync.Mutex, w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return lockedWriter{mu, w}
}

// mergeSorted is the sorted union of two sorted pid lists.
func mergeSorted(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return out
}
