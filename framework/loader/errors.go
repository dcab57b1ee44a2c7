package loader

import "errors"

// Sentinels for errors.Is; the errors returned wrap them with the kind, name
// and what is available.
var (
	// ErrUnknownKind: no such plugin kind.
	ErrUnknownKind = errors.New("loader: unknown plugin kind")
	// ErrNotFound: no builtin or binary provides the plugin.
	ErrNotFound = errors.New("loader: plugin not found")
	// ErrIsolation: the plugin cannot run with the isolation asked for.
	ErrIsolation = errors.New("loader: isolation not possible")
	// ErrProtocol: a plugin speaks another version of tickemu's plugin
	// protocol.
	ErrProtocol = errors.New("loader: plugin protocol version mismatch")
	// ErrStart: a plugin process failed to start, handshake or open.
	ErrStart = errors.New("loader: plugin failed to start")
)
