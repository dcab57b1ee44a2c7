package clockevents

import "errors"

// Errors returned by New and NewBroadcast.
var (
	ErrNoOneshot    = errors.New("clockevents: device has no oneshot mode")
	ErrBadSpec      = errors.New("clockevents: invalid device spec")
	ErrBadHZ        = errors.New("clockevents: HZ must be positive")
	ErrNotBroadcast = errors.New("clockevents: device cannot be the broadcast device")
	ErrNotLocal     = errors.New("clockevents: device is not a per-CPU device")
)
