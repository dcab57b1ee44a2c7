package sdk

import (
	"fmt"
	"strings"
)

// TransportError reports that an out-of-process plugin can no longer be reached:
// it exited, was killed, or did not answer in time. The kind interfaces have no
// error returns, so a client shim panics with a *TransportError and the run loop
// recovers it into an ordinary error; in-process plugins never raise it.
type TransportError struct {
	Kind   Kind
	Name   string
	Pid    int
	Exit   string   // how the process ended, e.g. "signal: killed"; empty if unknown
	Stderr []string // the last lines of its stderr
	Err    error
}

func (e *TransportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %s %q", e.Kind, e.Name)
	if e.Pid > 0 {
		fmt.Fprintf(&b, " (pid %d)", e.Pid)
	}
	if e.Exit != "" {
		fmt.Fprintf(&b, " exited: %s", e.Exit)
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, "; last stderr: %s", strings.Join(e.Stderr, " | "))
	}
	return b.String()
}

func (e *TransportError) Unwrap() error { return e.Err }
