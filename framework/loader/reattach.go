package loader

import (
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/tickemu/tickemu/framework/logging"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/pluginlog"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// ReattachEnv is the environment variable the CLI reads Options.Reattach
// from when --plugin-reattach is not given.
const ReattachEnv = shim.ReattachEnv

// A reattached plugin runs on its own: its author started the binary with
// --debug (serve.Serve prints the line to pass here), typically under a
// debugger, and tickemu connects to it instead of starting a process. The
// host then neither kills it nor watches it exit; each Open is a new session
// on the same process, so one debugging session serves run after run.

// attach connects to the plugin process at a.
func (c *Catalog) attach(desc string, a shim.ReattachAddr) (*process, plugin.ClientProtocol, error) {
	rc, err := a.Config()
	if err != nil {
		return nil, nil, err
	}
	if rc.ProtocolVersion != sdk.ProtocolVersion {
		return nil, nil, versionError(rc.ProtocolVersion)
	}
	out := logging.NewPluginOutput(c.log, desc, c.opts.TailLines)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: shim.Handshake,
		// A reattached client skips the handshake that picks a plugin set
		// from VersionedPlugins: name the one of our protocol version.
		Plugins:          shim.ClientPlugins()[sdk.ProtocolVersion],
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Managed:          true,
		Stderr:           out.Stderr(),
		SyncStdout:       out.SyncStdout(),
		SyncStderr:       out.SyncStderr(),
		Logger:           pluginlog.HCLog(c.log.With().Str("plugin", desc).Logger(), "plugin"),
	})
	p := &process{client: client, out: out, pid: a.Pid}
	rpc, err := client.Client()
	if err != nil {
		return nil, nil, fmt.Errorf("reattaching to pid %d at %s %s (is the plugin still running with --debug?): %w", a.Pid, a.Network, a.Address, err)
	}
	return p, rpc, nil
}

// describeReattached returns what the reattached plugin k serves, asking it
// once.
func (c *Catalog) describeReattached(k key, a shim.ReattachAddr) (found, error) {
	d := c.entry("reattach " + k.String())
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.done {
		d.descs, d.err = c.askReattached(k, a)
		d.done = true
	}
	f := found{reattach: &a}
	if d.err != nil {
		return f, d.err
	}
	desc, ok := serves(d.descs, k)
	if !ok {
		return f, fmt.Errorf("%w: %s plugin %q: the reattached process (pid %d) does not serve it", ErrNotFound, k.kind, k.name, a.Pid)
	}
	f.desc = desc
	return f, nil
}

func (c *Catalog) askReattached(k key, a shim.ReattachAddr) ([]shim.Description, error) {
	p, rpc, err := c.attach(k.String(), a)
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q: %w", ErrStart, k.kind, k.name, err)
	}
	return c.describeOver(rpc, p, fmt.Sprintf("reattached pid %d", a.Pid), c.describeTimeout(), nil)
}

// openReattached opens a session with k in the reattached process.
func (c *Catalog) openReattached(k key, a shim.ReattachAddr) (*Instance, error) {
	source := fmt.Sprintf("%s (pid %d)", SourceReattached, a.Pid)
	p, rpc, err := c.attach(k.String(), a)
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q (%s): %w", ErrStart, k.kind, k.name, source, err)
	}
	raw, err := rpc.Dispense(string(k.kind))
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q (%s): %w", ErrStart, k.kind, k.name, source, err)
	}
	// Under a debugger a call may sit at a breakpoint: the call timeout
	// applies as to any plugin process (set it generously there).
	pl, err := raw.(*shim.Conn).Open(k.name, shim.Options{CallTimeout: c.opts.CallTimeout, Process: p, GRPCOnly: c.grpcOnly()})
	if err != nil {
		return nil, fmt.Errorf("%w: %s plugin %q (%s): %w", ErrStart, k.kind, k.name, source, err)
	}
	c.log.Info().Str("plugin", k.String()).Int("pid", a.Pid).Msg("using reattached plugin")
	return &Instance{key: k, source: source, iso: Process, plugin: pl, proc: p}, nil
}

// versionError words a protocol mismatch for the plugin's author.
func versionError(v int) error {
	return fmt.Errorf("%w: the plugin speaks protocol version %d, this tickemu speaks %d (rebuild the plugin against a tickemu SDK of protocol %d)",
		ErrProtocol, v, sdk.ProtocolVersion, sdk.ProtocolVersion)
}
