package logging

import (
	"io"

	"github.com/rs/zerolog"
)

// PluginLevelEnv is the environment variable through which the loader tells
// a plugin process the host's log level, so the plugin does not format lines
// the host would drop. It is one of the few variables a plugin process gets
// (the loader sets go-plugin's SkipHostEnv).
const PluginLevelEnv = "TICKEMU_PLUGIN_LOG_LEVEL"

// NewPluginLogger returns the logger of a plugin process: zerolog JSON with
// zerolog's default field names and no timestamp (the host stamps lines as it
// reads them), at level (see ParseLevel; an unknown level means info). w must
// be the process's real stderr, captured before go-plugin's Serve replaces
// os.Stderr: that is the stream the host parses.
func NewPluginLogger(w io.Writer, level string) zerolog.Logger {
	lvl, err := ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl)
}
