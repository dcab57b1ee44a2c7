// Package loader finds plugins and starts them.
//
// A Catalog knows the builtin plugins (factories linked into tickemu, listed
// by plugins/builtin) and the plugin binaries named tickemu-plugin-NAME
// on the plugin search path; resolve.go holds the one rule that decides which
// of them a KIND/NAME means, for listing and opening alike, and the
// description cache (cache.go) lets a run resolve names without starting
// binaries it does not use. A lock file (lock.go) pins binaries by SHA-256,
// and a plugin its author started with --debug can be reattached to
// (reattach.go). Open returns an Instance: the plugin as its kind's
// sdk interface, either the builtin's own value called directly (isolation
// "inprocess", the default for builtins) or a gRPC client of a plugin process
// (isolation "process": a binary, or tickemu re-executed as `tickemu plugin
// serve KIND NAME`). The simulation cannot tell the two apart; the kind is
// checked here, once.
//
// Plugin processes are go-plugin clients with tickemu's versioned handshake.
// They are Managed (call CleanupClients when tickemu exits, also on signals),
// get only an allow-list of environment variables (SkipHostEnv: a plugin must
// not behave differently because of what the user exported), and watch their
// host (framework/sdk/serve). Their stderr becomes host log records at each line's
// level (framework/logging), and the last lines are kept for errors. AutoMTLS
// is off by default: the plugin's Unix socket lives in a directory only its
// owner can enter (0700, made by go-plugin for each plugin and removed on
// exit), so mTLS adds no protection against other users, while it costs 15–60 ms of key generation per start on our 2-core
// machines (docs/reference/plugin-transport.md §1) and a run may start
// several plugins per seed. Options.AutoMTLS turns it on.
//
// Transport failures during a run surface as a panic with *sdk.TransportError
// from the plugin's methods (see framework/sdk/shim); the run loop
// recovers it. A plugin is never restarted: that would break determinism.
package loader
