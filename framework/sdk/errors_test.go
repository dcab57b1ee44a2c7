package sdk

import (
	"errors"
	"testing"
)

func TestTransportErrorError(t *testing.T) {
	grpcEOF := errors.New("rpc error: code = Unavailable desc = error reading from server: EOF")
	tests := []struct {
		name string
		e    TransportError
		want string
	}{
		{"killed", TransportError{Kind: KindClockEvent, Name: "fixed", Call: "SetNextEvent", Pid: 4242, Exit: "signal: killed",
			Stderr: []string{"first", "last words", ""}, Err: grpcEOF},
			`clockevent plugin "fixed" (pid 4242) exited (signal: killed) during SetNextEvent: rpc error: code = Unavailable desc = error reading from server: EOF; last stderr line: last words`},
		{"exited, no process", TransportError{Kind: KindTimerBase, Name: "w", Call: "RunTimers", Err: ErrPluginExited},
			`wheel plugin "w" exited during RunTimers: sdk: plugin exited`},
		{"timeout", TransportError{Kind: KindHRTimer, Name: "h", Pid: 7, Call: "Interrupt", Err: ErrPluginTimeout},
			`hrtimer plugin "h" (pid 7) stopped answering during Interrupt: sdk: plugin did not answer in time`},
		{"multi-line cause", TransportError{Kind: KindHRTimer, Name: "h", Err: errors.New("panic: boom\n\ngoroutine 1 [running]:\n\tmain.main()")},
			`hrtimer plugin "h" failed: panic: boom goroutine 1 [running]: main.main()`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%s: Error() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTransportErrorUnwrap(t *testing.T) {
	e := &TransportError{Err: ErrPluginTimeout}
	if !errors.Is(e, ErrPluginTimeout) || errors.Is(e, ErrPluginExited) {
		t.Errorf("errors.Is(%v, ErrPluginTimeout/ErrPluginExited) = %v/%v, want true/false", e,
			errors.Is(e, ErrPluginTimeout), errors.Is(e, ErrPluginExited))
	}
}
