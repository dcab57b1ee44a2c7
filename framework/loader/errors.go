package loader

import "errors"

// Sentinels for errors.Is; the errors returned wrap them with the kind, name
// and what is available.
var (
	// ErrUnknownKind: no such plugin kind.
	ErrUnknownKind = errors.New("loader: unknown plugin kind")
	// ErrNotFound: no builtin or binary provides the plugin. It has a
	// PluginNotFound method, which is how framework/experiment tells "no
	// such plugin" from "the plugin could not be asked" without importing
	// the loader.
	ErrNotFound error = notFound{}
	// ErrIsolation: the plugin cannot run with the isolation asked for.
	ErrIsolation = errors.New("loader: isolation not possible")
	// ErrProtocol: a plugin speaks another version of tickemu's plugin
	// protocol.
	ErrProtocol = errors.New("loader: plugin protocol version mismatch")
	// ErrMagicCookie: a go-plugin plugin that is not tickemu's (its
	// handshake cookie differs).
	ErrMagicCookie = errors.New("loader: wrong magic cookie")
	// ErrStart: a plugin process failed to start, handshake or open.
	ErrStart = errors.New("loader: plugin failed to start")
)

type notFound struct{}

func (notFound) Error() string        { return "loader: plugin not found" }
func (notFound) PluginNotFound() bool { return true }
