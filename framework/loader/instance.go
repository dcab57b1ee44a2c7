package loader

import (
	"fmt"
	"sync"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// Instance is an open plugin: the same interface whether it runs in process
// or in a plugin process (the Nomad loader's PluginInstance).
type Instance struct {
	key    key
	source string
	iso    Isolation
	plugin sdk.Plugin
	proc   *process // nil in process
	vetted bool     // linked in process from a Vetted factory

	killOnce sync.Once
}

// Vetted reports whether the instance is a vetted builtin (sdk.Factory.Vetted)
// linked in process; in its own process no plugin is.
func (i *Instance) Vetted() bool { return i.vetted }

// Plugin returns the plugin; its kind's accessor returns the same value typed.
func (i *Instance) Plugin() sdk.Plugin { return i.plugin }

// TimerBase returns the plugin if it is a TimerBase, else nil.
func (i *Instance) TimerBase() sdk.TimerBase {
	p, _ := i.plugin.(sdk.TimerBase)
	return p
}

// HRTimerBase returns the plugin if it is an HRTimerBase, else nil.
func (i *Instance) HRTimerBase() sdk.HRTimerBase {
	p, _ := i.plugin.(sdk.HRTimerBase)
	return p
}

// ClockEventDevice returns the plugin if it is a ClockEventDevice, else nil.
func (i *Instance) ClockEventDevice() sdk.ClockEventDevice {
	p, _ := i.plugin.(sdk.ClockEventDevice)
	return p
}

// Kind returns the plugin's kind.
func (i *Instance) Kind() sdk.Kind { return i.key.kind }

// Name returns the plugin's name.
func (i *Instance) Name() string { return i.key.name }

// Source returns SourceBuiltin, SourceLinkedIn and the module, or the plugin
// binary's path.
func (i *Instance) Source() string { return i.source }

// Isolation returns InProcess or Process.
func (i *Instance) Isolation() Isolation { return i.iso }

// Pid returns the plugin process's id, 0 in process.
func (i *Instance) Pid() int {
	if i.proc == nil {
		return 0
	}
	return i.proc.pid
}

// Exited reports whether the plugin process has ended; always false in
// process.
func (i *Instance) Exited() bool {
	return i.proc != nil && i.proc.client.Exited()
}

// StderrTail returns the last lines the plugin process wrote on stderr (nil
// in process).
func (i *Instance) StderrTail() []string {
	if i.proc == nil {
		return nil
	}
	return i.proc.out.Tail()
}

// Kill ends the session and stops the plugin process: gracefully, then by
// force after go-plugin's 2 s grace period; every process it forked is
// killed with it (its process group). Calling the plugin afterwards
// panics with a *sdk.TransportError. Safe to call more than once; a no-op in
// process.
func (i *Instance) Kill() {
	if i.proc == nil {
		return
	}
	i.killOnce.Do(func() {
		if c, ok := i.plugin.(shim.Closer); ok {
			c.Close()
		}
		i.proc.stop()
	})
}

// String describes the instance for messages:
// `clockevent plugin "hpet" (builtin, in process)` or
// `clockevent plugin "fixed" (/path/tickemu-plugin-fixed, pid 4242)`.
func (i *Instance) String() string {
	if i.proc == nil {
		return fmt.Sprintf("%s plugin %q (%s, in process)", i.key.kind, i.key.name, i.source)
	}
	return fmt.Sprintf("%s plugin %q (%s, pid %d)", i.key.kind, i.key.name, i.source, i.proc.pid)
}
