// Package logging builds tickemu's zerolog loggers and carries plugin logs
// across the process boundary.
//
// Host side: New builds the CLI's logger (console on a terminal, JSON
// otherwise). NewPluginOutput turns what a plugin process writes on its stderr
// into host log records at each line's own level, tagged plugin=NAME, and
// keeps the last lines for sdk.TransportError. HCLog adapts a zerolog logger
// to the hclog.Logger go-plugin wants.
//
// Plugin side: NewPluginLogger builds the JSON logger framework/sdk/serve puts on
// the process's real stderr before go-plugin takes os.Stderr over.
//
// Why the host parses plugin stderr itself: go-plugin re-logs plugin stderr
// lines through hclog only when they carry hclog's @level/@message keys;
// zerolog's level/message lines all land at DEBUG, so an INFO host loses a
// plugin's errors (checked by a run;
// see docs/reference/plugin-transport.md §2). Renaming zerolog's global field names in the plugin would fix that
// for external plugins but would rename the host's own fields for builtins
// run in process, so instead go-plugin's parsing is switched off (HCLog
// reports hclog.Off) and PluginOutput reads zerolog's own format.
//
// Nothing here touches zerolog's globals, and simulated time is a field
// (sim_ns) set by callers, never the timestamp.
package logging
