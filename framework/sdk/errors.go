package sdk

import (
	"errors"
	"fmt"
	"strings"
)

// Causes of a TransportError, for errors.Is.
var (
	// ErrPluginExited: the plugin's process ended (or its server stopped)
	// while the host still needed it.
	ErrPluginExited = errors.New("sdk: plugin exited")
	// ErrPluginTimeout: the plugin did not answer a call within the host's
	// call timeout.
	ErrPluginTimeout = errors.New("sdk: plugin did not answer in time")
)

// TransportError is the value a plugin client panics with when the transport to
// an out-of-process plugin fails. The kind interfaces have no error returns (a
// call is on the simulation's hot path), so a failed call cannot return
// normally; the host's run loop recovers the panic and ends the run with this
// error. In-process plugins never produce one.
type TransportError struct {
	Kind Kind
	Name string
	// Call is the sdk method that failed ("SetNextEvent").
	Call string
	// Pid is the plugin's process id, 0 when it is not a separate process
	// (an in-process gRPC pair in tests).
	Pid int
	// Exit says how the process ended, as os.ProcessState prints it
	// ("signal: killed", "exit status 2"); empty if it had not ended.
	Exit string
	// Stderr holds the last lines the process wrote to its stderr, oldest
	// first.
	Stderr []string
	// Err is the cause: it wraps ErrPluginExited or ErrPluginTimeout when the
	// failure was mapped to one, else it is the error the call received.
	Err error
	// Stack is the plugin's stack when the call panicked inside the plugin,
	// one line per element, from the goroutine header down through the
	// plugin's own frames (the serving machinery's frames are left out);
	// Err then says what the panic value was.
	Stack []string
}

// Error returns one line: the plugin, what happened, and its last stderr line.
func (e *TransportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s plugin %q", e.Kind, e.Name)
	if e.Pid != 0 {
		fmt.Fprintf(&b, " (pid %d)", e.Pid)
	}
	switch {
	case e.Exit != "":
		fmt.Fprintf(&b, " exited (%s)", e.Exit)
	case errors.Is(e.Err, ErrPluginExited):
		b.WriteString(" exited")
	case errors.Is(e.Err, ErrPluginTimeout):
		b.WriteString(" stopped answering")
	default:
		b.WriteString(" failed")
	}
	if e.Call != "" {
		fmt.Fprintf(&b, " during %s", e.Call)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s", oneLine(e.Err.Error()))
	}
	if len(e.Stack) > 0 {
		return b.String() // the stack says more than the plugin's last log line
	}
	for i := len(e.Stderr) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(e.Stderr[i]); line != "" {
			fmt.Fprintf(&b, "; last stderr line: %s", oneLine(line))
			break
		}
	}
	return b.String()
}

// Unwrap returns Err.
func (e *TransportError) Unwrap() error { return e.Err }

// oneLine folds a multi-line message (a remote panic value) onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ContractError is the value the host panics with when a plugin's answer
// breaks the plugin contract (framework/contract checks every answer, in
// process and out of process): a time in the past, a negative or huge cost, a
// non-finite frequency, a channel count beyond the machine, a timer id the
// host never gave the plugin, a name that is not printable. The run ends with
// it as the plugin's fault, like a TransportError.
type ContractError struct {
	Kind Kind
	Name string
	// Call is the sdk method whose answer broke the contract ("Ack").
	Call string
	// Problem says what is wrong, with the value ("nextFire 100 is not after
	// now 200").
	Problem string
}

// Error returns one line naming the plugin, the call and the value.
func (e *ContractError) Error() string {
	return fmt.Sprintf("%s plugin %q broke the plugin contract in %s: %s", e.Kind, e.Name, e.Call, oneLine(e.Problem))
}
