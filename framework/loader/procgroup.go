package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-plugin/runner"
)

// A plugin process runs in its own process group, so that the host can end
// the plugin together with every process it forked: go-plugin's Kill signals
// only the direct child, and a child left behind keeps the plugin's stdout and
// stderr pipes open (which blocks go-plugin's reaper) and outlives the host.
//
// procGroup is one such group. Its id is the plugin process's pid (the
// plugin is the group's leader). Linux does not hand a pid out again while a
// process group of that id still has members, so signalling the group after
// the leader was reaped reaches its children and nothing else.
type procGroup struct {
	pgid int
	once sync.Once
	// killed is set once the host has killed the group.
	killed atomic.Bool
}

// groups are the process groups of plugin processes this host started and
// has not killed yet, for KillPluginGroups.
var groups struct {
	mu  sync.Mutex
	set map[*procGroup]struct{}
}

// trackGroup records the group led by the started process pid. A pid of 0
// (the process never started) gives a group whose kill does nothing.
func trackGroup(pid int) *procGroup {
	g := &procGroup{pgid: pid}
	if pid <= 0 {
		g.once.Do(func() {})
		return g
	}
	groups.mu.Lock()
	if groups.set == nil {
		groups.set = make(map[*procGroup]struct{})
	}
	groups.set[g] = struct{}{}
	groups.mu.Unlock()
	return g
}

// kill sends SIGKILL to every process of the group, once. SIGKILL also ends
// a stopped (SIGSTOP) process, which a gentler signal would leave pending.
func (g *procGroup) kill() {
	g.once.Do(func() {
		g.killed.Store(g.pgid > 0)
		killGroup(g.pgid)
		groups.mu.Lock()
		delete(groups.set, g)
		groups.mu.Unlock()
	})
}

// KillPluginGroups kills every plugin process this host started, and every
// process they forked, at once. It is safe to call from a signal handler's
// goroutine while runs are in progress (their next plugin call then fails),
// and afterwards CleanupClients returns promptly.
func KillPluginGroups() {
	groups.mu.Lock()
	gs := make([]*procGroup, 0, len(groups.set))
	for g := range groups.set {
		gs = append(gs, g)
	}
	groups.mu.Unlock()
	for _, g := range gs {
		g.kill()
	}
}

// PluginGroups returns the ids of the live plugin process groups, sorted; for
// tests and diagnostics.
func PluginGroups() []int {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	out := make([]int, 0, len(groups.set))
	for g := range groups.set {
		out = append(out, g.pgid)
	}
	sort.Ints(out)
	return out
}

// groupRunner is the go-plugin runner.Runner of a plugin process: go-plugin's
// own command runner, except that the process starts in its own group
// (setGroupAttr: Setpgid, and Pdeathsig on Linux), the group is tracked from
// the moment the process exists (so a signal during the handshake finds it),
// and Kill kills the whole group. go-plugin calls Kill when the handshake
// fails and when a graceful stop does not end the process within 2 s.
//
// With a RunnerFunc go-plugin also gives each plugin a private socket
// directory (0700, removed on Kill). Note that go-plugin's SecureConfig
// checks ClientConfig.Cmd, which is unset with a RunnerFunc: a checksum check
// belongs in Start, before cmd.Start.
type groupRunner struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	group  *procGroup
	// started is closed once Start has run; group is set (nil if the process
	// did not start).
	started chan struct{}
	// verify, if set, is called just before the process starts; an error
	// stops it from starting (the lock file's checksum check, lock.go).
	verify func() error
}

var _ runner.Runner = (*groupRunner)(nil)

// newGroupRunner returns a runner for cmd, taking from spec (the command
// go-plugin prepared) the environment with its handshake variables and stdin.
func newGroupRunner(cmd, spec *exec.Cmd) (*groupRunner, error) {
	cmd.Env = append(cmd.Env, spec.Env...)
	cmd.Stdin = spec.Stdin
	setGroupAttr(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &groupRunner{cmd: cmd, stdout: stdout, stderr: stderr, started: make(chan struct{})}, nil
}

// Start implements runner.Runner.
func (r *groupRunner) Start(context.Context) error {
	defer close(r.started)
	if r.verify != nil {
		if err := r.verify(); err != nil {
			r.group = trackGroup(0)
			return err
		}
	}
	if err := r.cmd.Start(); err != nil {
		r.group = trackGroup(0)
		return err
	}
	r.group = trackGroup(r.cmd.Process.Pid)
	return nil
}

// killGroup kills the process group, if Start has run.
func (r *groupRunner) killGroup() {
	select {
	case <-r.started:
		r.group.kill()
	default: // not started: nothing to kill
	}
}

// killedByHost reports whether the host killed the group.
func (r *groupRunner) killedByHost() bool {
	select {
	case <-r.started:
		return r.group.killed.Load()
	default:
		return false
	}
}

// Wait implements runner.Runner.
func (r *groupRunner) Wait(context.Context) error { return r.cmd.Wait() }

// Kill implements runner.Runner: SIGKILL to the whole group.
func (r *groupRunner) Kill(context.Context) error {
	r.killGroup()
	return nil
}

// Stdout implements runner.Runner.
func (r *groupRunner) Stdout() io.ReadCloser { return r.stdout }

// Stderr implements runner.Runner.
func (r *groupRunner) Stderr() io.ReadCloser { return r.stderr }

// Name implements runner.Runner.
func (r *groupRunner) Name() string { return r.cmd.Path }

// ID implements runner.Runner: the pid, "" before the process started (which
// go-plugin's Kill takes as nothing to kill).
func (r *groupRunner) ID() string {
	select {
	case <-r.started:
		if r.group.pgid > 0 {
			return fmt.Sprint(r.group.pgid)
		}
	default:
	}
	return ""
}

// Diagnose implements runner.Runner; handshakeError words the failure.
func (r *groupRunner) Diagnose(context.Context) string {
	if _, err := os.Stat(r.cmd.Path); errors.Is(err, os.ErrNotExist) {
		return "the plugin binary does not exist"
	}
	return ""
}

// PluginToHost implements runner.AddrTranslator: host and plugin share the
// file system and network.
func (r *groupRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin implements runner.AddrTranslator.
func (r *groupRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
