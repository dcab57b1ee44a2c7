package loader

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/tickemu/tickemu/framework/logging"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/pluginlog"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// passEnv lists the host environment variables a plugin process inherits.
// Everything else is withheld (go-plugin SkipHostEnv): TMPDIR places the
// plugin's socket, the Go runtime ones only affect diagnostics and
// scheduling (GORACE: a race-built plugin reports as its host was told to,
// and make test-full's atexit_sleep_ms=0 spares each one a 1 s sleep at
// exit), and GOCOVERDIR lets `go test -cover` count plugin processes.
var passEnv = []string{"TMPDIR", "GOTRACEBACK", "GODEBUG", "GOMAXPROCS", "GORACE", "GOCOVERDIR"}

// CleanupClients stops every plugin process still running (go-plugin's
// Managed clients: gracefully, then by force after 2 s) and kills what is
// left of their process groups. Call it when tickemu exits; on a signal,
// call KillPluginGroups first.
func CleanupClients() {
	plugin.CleanupClients()
	KillPluginGroups()
}

// RoundTrips returns how many calls this process has made to plugin processes
// (each is one request/answer pair on a plugin's stream).
func RoundTrips() uint64 { return shim.RoundTrips() }

// process is a running plugin process; it implements shim.Process.
type process struct {
	client *plugin.Client
	cmd    *exec.Cmd
	runner *groupRunner // nil until go-plugin starts the process
	out    *logging.PluginOutput
	pid    int
}

var _ shim.Process = (*process)(nil)

// Pid implements shim.Process.
func (p *process) Pid() int { return p.pid }

// Exit implements shim.Process. go-plugin reaps the process (cmd.Wait) and
// then, under its lock, records that it exited; reading cmd.ProcessState
// after Exited() returned true is therefore ordered after the write.
func (p *process) Exit(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for !p.client.Exited() {
		if !time.Now().Before(deadline) {
			return ""
		}
		time.Sleep(2 * time.Millisecond)
	}
	if ps := p.cmd.ProcessState; ps != nil {
		return ps.String()
	}
	return "exited"
}

// StderrTail implements shim.Process.
func (p *process) StderrTail() []string { return p.out.Tail() }

// CrashStack returns the stacks of the Go crash dump the process wrote
// before it died, if any (the shim puts them in TransportError.Stack).
func (p *process) CrashStack() []string { return p.out.Crash() }

// env returns a plugin process's environment.
func (c *Catalog) env() []string {
	env := []string{pluginlog.LevelEnv + "=" + c.log.GetLevel().String()}
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, c.opts.Env...)
}

// start starts cmd as a go-plugin process named desc in logs and errors,
// within timeout (0: StartTimeout; startDeadline says how it is counted).
// If verify is a path, the lock file in force (if any) must list that
// binary with its checksum. On error the process is killed; on success the
// deadline is still armed, for the caller to stop (describeBinary lets it
// cover the Describe call too).
func (c *Catalog) start(desc string, cmd *exec.Cmd, timeout time.Duration, verify string) (*process, plugin.ClientProtocol, *startDeadline, error) {
	out := logging.NewPluginOutput(c.log, desc, c.opts.TailLines)
	cmd.Env = c.env()
	if timeout <= 0 {
		timeout = c.startTimeout()
	}
	var check func() error
	if verify != "" && c.opts.Lock != nil {
		check = func() error { return c.opts.Lock.verify(verify) }
	}
	p := &process{cmd: cmd, out: out}
	deadline := watchStart(timeout, hostAndGroup)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  shim.Handshake,
		VersionedPlugins: shim.ClientPlugins(),
		// The plugin runs in its own process group (procgroup.go), and
		// go-plugin gives it a private (0700) directory for its socket.
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
			r, err := newGroupRunner(cmd, spec)
			if r != nil {
				r.verify = check
				deadline.runner <- r
			}
			p.runner = r
			return r, err
		},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Managed:          true,
		SkipHostEnv:      true,
		AutoMTLS:         c.opts.AutoMTLS,
		// The deadline is startDeadline's, which kills the process.
		StartTimeout: noDeadline,
		Stderr:       out.Stderr(),
		SyncStdout:   out.SyncStdout(),
		SyncStderr:   out.SyncStderr(),
		Logger: quietAfterKill{Logger: pluginlog.HCLog(c.log.With().Str("plugin", desc).Logger(), "plugin"),
			killed: func() bool { return p.runner != nil && p.runner.killedByHost() }},
	})
	p.client = client
	rpc, err := client.Client()
	if err != nil {
		expired := deadline.stop()
		p.kill() // reaps it: all it wrote on stderr is in the tail now
		if expired {
			err = handshakeTimeout(timeout)
		} else {
			err = handshakeError(err, p.out.Tail())
		}
		return nil, nil, nil, p.failed(err)
	}
	if cmd.Process != nil {
		p.pid = cmd.Process.Pid
	}
	if v := client.NegotiatedVersion(); v != sdk.ProtocolVersion {
		deadline.stop()
		return nil, nil, nil, p.failed(versionError(v))
	}
	return p, rpc, deadline, nil
}

// startTimeout is the deadline of a plugin process's start and handshake.
func (c *Catalog) startTimeout() time.Duration {
	switch t := c.opts.StartTimeout; {
	case t > 0:
		return t
	case c.opts.CallTimeout == 0:
		return shim.DefaultCallTimeout
	case c.opts.CallTimeout < 0:
		return noDeadline
	default:
		return c.opts.CallTimeout
	}
}

// handshakeTimeout is the error of a start that missed its deadline.
func handshakeTimeout(timeout time.Duration) error {
	return fmt.Errorf("%w: no go-plugin handshake on stdout within %v", sdk.ErrPluginTimeout, timeout)
}

// handshakeError words a failed go-plugin handshake for the plugin's
// author, given what the process wrote on stderr: a plugin of another
// protocol version, a go-plugin plugin that did not find tickemu's cookie
// (built for another program, or with another cookie), or a binary that
// printed something other than the handshake line on stdout (go-plugin's
// several-paragraph explanation shortened to one line). Other errors pass
// unchanged. (A silent binary's timeout is start's: startDeadline.)
func handshakeError(err error, stderr []string) error {
	msg := err.Error()
	var v int
	if i := strings.Index(strings.ToLower(msg), "incompatible api version with plugin. plugin version: "); i >= 0 {
		if _, serr := fmt.Sscanf(msg[i+len("incompatible api version with plugin. plugin version: "):], "%d", &v); serr == nil {
			return versionError(v)
		}
	}
	for _, l := range stderr {
		if strings.Contains(l, "This binary is a plugin. These are not meant to be executed directly") {
			return fmt.Errorf("%w: it is a go-plugin plugin, but it did not find tickemu's handshake cookie %s "+
				"(a plugin of another program, or built with another cookie): it exited instead of serving", ErrMagicCookie, shim.Handshake.MagicCookieKey)
		}
	}
	const prefix = "Unrecognized remote plugin message:"
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	got, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(msg, prefix)), "\n")
	if got == "" || strings.HasPrefix(got, "Failed to read any lines") {
		got = "nothing"
	} else {
		got = strconv.Quote(got)
	}
	return fmt.Errorf("no go-plugin handshake on stdout (got %s): it exited early, is not a tickemu plugin, "+
		"was built for another system, or wrote to stdout before serving", got)
}

// Kill implements shim.Process: SIGKILL to the process group, without
// waiting for go-plugin to reap it.
func (p *process) Kill() {
	if p.runner != nil {
		p.runner.killGroup()
	}
}

// kill ends the process and every process it forked at once, then lets
// go-plugin reap it and close its connection.
func (p *process) kill() {
	p.Kill()
	p.client.Kill()
}

// stopGrace is how long a plugin process gets to exit by itself when it is
// stopped: go-plugin's graceful shutdown is an RPC without a deadline, which a
// stopped (SIGSTOP) plugin never answers.
const stopGrace = 2 * time.Second

// stop ends the process gracefully, and by force after stopGrace, then kills
// what is left of its group: children that do not hold the plugin's pipes
// would not delay go-plugin, and would survive it.
func (p *process) stop() {
	force := time.AfterFunc(stopGrace, p.Kill)
	p.client.Kill()
	force.Stop()
	p.Kill()
}

// failed kills the process and returns err with its stderr tail.
func (p *process) failed(err error) error {
	p.kill()
	tail := p.out.Tail()
	if n := len(tail); n > 5 {
		tail = tail[n-5:]
	}
	if len(tail) > 0 {
		return fmt.Errorf("%w; stderr: %s", err, strings.Join(tail, " | "))
	}
	return err
}

// describeBinary starts b, asks its catalog and stops it, within the
// describe timeout (start and Describe together, counted as startDeadline
// counts): a binary that hangs costs a run that much, once.
func (c *Catalog) describeBinary(b binary) ([]shim.Description, error) {
	timeout := c.describeTimeout()
	p, rpc, deadline, err := c.start(BinaryPrefix+b.name, exec.Command(b.path), timeout, b.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStart, b.path, err)
	}
	defer p.stop()
	return c.describeOver(rpc, p, b.path, timeout, deadline)
}

// describeTimeout is DescribeTimeout, else CallTimeout (--plugin-call-timeout,
// either way: a user who gives a Python or Node plugin 60 s to start gives
// its first describe as long), else the default; never longer than
// StartTimeout if it is set.
func (c *Catalog) describeTimeout() time.Duration {
	t := c.opts.DescribeTimeout
	switch {
	case t > 0:
	case c.opts.CallTimeout < 0: // no deadlines: debugging
		t = noDeadline
	case c.opts.CallTimeout > 0:
		t = c.opts.CallTimeout
	default:
		t = DefaultDescribeTimeout
	}
	if st := c.opts.StartTimeout; st > 0 && st < t {
		t = st
	}
	return t
}

// describeOver asks the catalog of the plugin process at the other end of
// rpc within timeout: with the deadline of its start, still armed, that
// deadline's (a binary being described); with none (a reattached process),
// a Describe call's wall time, capped by CallTimeout.
func (c *Catalog) describeOver(rpc plugin.ClientProtocol, p *process, what string, timeout time.Duration, start *startDeadline) ([]shim.Description, error) {
	call := shim.NoTimeout
	if start == nil {
		call = timeout
		if ct := c.opts.CallTimeout; ct > 0 && ct < call {
			call = ct
		}
		call = max(call, time.Millisecond)
	}
	raw, err := rpc.Dispense(shim.CatalogName)
	var descs []shim.Description
	if err == nil {
		descs, err = raw.(*shim.CatalogClient).Describe(call)
	}
	if start != nil && start.stop() {
		err = fmt.Errorf("%w: no answer to Describe within %v", sdk.ErrPluginTimeout, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: describe: %w", ErrStart, what, p.failed(err))
	}
	return descs, nil
}

// openProcess starts cmd and opens a session with k in it.
func (c *Catalog) openProcess(k key, source string, cmd *exec.Cmd, verify string) (*Instance, error) {
	p, rpc, deadline, err := c.start(k.String(), cmd, 0, verify)
	if err == nil && deadline.stop() {
		// It expired as the handshake came: the process is killed.
		err = p.failed(handshakeTimeout(c.startTimeout()))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q (%s): %w", ErrStart, k.kind, k.name, source, err)
	}
	raw, err := rpc.Dispense(string(k.kind))
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q (%s): %w", ErrStart, k.kind, k.name, source, p.failed(err))
	}
	pl, err := raw.(*shim.Conn).Open(k.name, shim.Options{CallTimeout: c.opts.CallTimeout, Process: p, GRPCOnly: c.grpcOnly()})
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q (%s): %w", ErrStart, k.kind, k.name, source, p.failed(err))
	}
	c.log.Debug().Str("plugin", k.String()).Int("pid", p.pid).Str("source", source).Msg("plugin process started")
	return &Instance{key: k, source: source, iso: Process, plugin: pl, proc: p}, nil
}

// TransportEnv names the environment variable that, set to "grpc", keeps
// plugin sessions on their gRPC streams (Options.GRPCOnly).
const TransportEnv = "TICKEMU_PLUGIN_TRANSPORT"

// grpcOnly reports whether sessions must stay on gRPC.
func (c *Catalog) grpcOnly() bool {
	return c.opts.GRPCOnly || os.Getenv(TransportEnv) == "grpc"
}

// quietAfterKill is go-plugin's logger for one plugin process. Once tickemu
// has killed the process (a missed deadline, a failure, a signal), go-plugin's
// error and warning about it ("plugin process exited" with "signal: killed",
// "plugin failed to exit gracefully") are expected and go to debug: the run's
// own error says what happened and why. A plugin that dies by itself is still
// reported at error.
type quietAfterKill struct {
	hclog.Logger
	killed func() bool
}

// Error implements hclog.Logger.
func (q quietAfterKill) Error(msg string, args ...any) {
	if q.killed() {
		q.Logger.Debug(msg, args...)
		return
	}
	q.Logger.Error(msg, args...)
}

// Warn implements hclog.Logger.
func (q quietAfterKill) Warn(msg string, args ...any) {
	if q.killed() {
		q.Logger.Debug(msg, args...)
		return
	}
	q.Logger.Warn(msg, args...)
}
