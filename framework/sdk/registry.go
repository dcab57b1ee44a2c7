package sdk

// Factory makes a fresh, unconfigured plugin value. Builtins are listed as
// factories in plugins/builtin; the same factories back `tickemu plugin
// serve KIND NAME` and third-party binaries.
type Factory struct {
	Kind Kind
	Name string
	New  func() Plugin
	// Vetted marks a plugin of tickemu's own builtin list (plugins/builtin
	// sets it, and nothing else): its kind's conformance suite (sdktest)
	// holds its answers to the plugin contract in tickemu's tests, so linked
	// into the host it runs without the contract checker on every call
	// (docs/plugins.md, "The contract the host checks"). A plugin's own
	// Factory leaves it unset; tickemu build --with clears it on the plugins
	// it links in.
	Vetted bool
}
