// Package pluginlog is the logging convention between tickemu and its Go
// plugin processes: the plugin logs zerolog JSON lines to its stderr at the
// level the host passes in LevelEnv, and go-plugin's own messages go through
// HCLog, on both sides. framework/sdk/serve uses it in the plugin; the host's
// loader and framework/logging use it to read and re-log those lines.
package pluginlog

import (
	"io"

	"github.com/rs/zerolog"
)

// LevelEnv is the environment variable through which the loader tells
// a plugin process the host's log level, so the plugin does not format lines
// the host would drop. It is one of the few variables a plugin process gets
// (the loader sets go-plugin's SkipHostEnv).
const LevelEnv = "TICKEMU_PLUGIN_LOG_LEVEL"

// New returns the logger of a plugin process: zerolog JSON with
// zerolog's default field names and no timestamp (the host stamps lines as it
// reads them), at level (trace, debug, info, warn, error or disabled; an
// empty or unknown level means info). w must be the process's real stderr,
// captured before go-plugin's Serve replaces os.Stderr: that is the stream
// the host parses.
func New(w io.Writer, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" || lvl == zerolog.NoLevel {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl)
}
