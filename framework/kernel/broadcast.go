package kernel

import "github.com/tickemu/tickemu/framework/ktime"

// broadcaster is the tick broadcast in oneshot mode (kernel/time/tick-broadcast.c)
// as the idle path uses it.
type broadcaster interface {
	// enter is tick_broadcast_enter(): hand c's next event (next) to the
	// broadcast device before c's local device stops; false = not possible.
	enter(c *CPU, now, next ktime.Time) bool
	// exit is tick_broadcast_exit() on idle exit; it returns the cost.
	exit(c *CPU, now ktime.Time) int64
}
