package sdk

import "github.com/rs/zerolog"

// LoggerSetter is implemented by a plugin that logs. The host calls SetLogger
// once, before any other call, with a logger tagged with the plugin. In
// process it is the host's own logger; in a plugin process it writes zerolog
// JSON on the process's real stderr, which the host parses and re-logs at each
// line's own level (framework/logging). Log setup and rare events only: every
// call on the simulation path is hot, and simulated time belongs in a field
// (sim_ns), never in the wall-clock timestamp.
type LoggerSetter interface {
	SetLogger(l zerolog.Logger)
}
