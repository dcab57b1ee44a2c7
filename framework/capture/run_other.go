//go:build !linux

package capture

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Capture is a capture; it exists on Linux only.
type Capture struct{}

// New refuses: a capture records the Linux kernel's trace events.
func New(o Options) (*Capture, error) {
	return nil, fmt.Errorf("%w: tickemu capture records the Linux kernel's trace events and runs on Linux only (this is %s)", ErrCannotRun, runtime.GOOS)
}

// Interrupt does nothing: New never returns a Capture here.
func (c *Capture) Interrupt(os.Signal) {}

// Abort does nothing: New never returns a Capture here.
func (c *Capture) Abort() {}

// Run fails: New never returns a Capture here.
func (c *Capture) Run() (*Result, error) {
	return nil, errors.New("tickemu capture runs on Linux only")
}
