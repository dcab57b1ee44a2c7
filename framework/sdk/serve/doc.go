// Package serve is the entry point of a plugin process.
//
// A third-party plugin binary, named tickemu-plugin-NAME and put on the
// plugin search path, is:
//
//	func main() { serve.Serve(myplugin.Factory) }
//
// and tickemu runs its own builtins out of process by re-executing itself as
// `tickemu plugin serve KIND NAME`, whose handler calls One.
//
// Serve and One never return. They build the plugin's logger on the process's
// real stderr before go-plugin replaces os.Stderr (that stream is what the
// host parses, see framework/logging), serve the plugins over go-plugin gRPC
// with tickemu's handshake and raised message limits, and exit when the host
// goes away: go-plugin has no parent watch, so a host killed with SIGKILL
// would otherwise leave its plugins running. Nothing may be written to stdout
// before Serve: go-plugin's handshake line is read from it.
package serve
