package sdk

// Factory makes a fresh, unconfigured plugin value. Builtins are listed as
// factories in plugins/builtin; the same factories back `tickemu plugin
// serve KIND NAME` and third-party binaries.
type Factory struct {
	Kind Kind
	Name string
	New  func() Plugin
}
