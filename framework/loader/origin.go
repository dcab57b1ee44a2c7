package loader

import (
	"net/url"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
)

// tickemuModule is the module of tickemu's own (builtin) plugins.
const tickemuModule = "github.com/tickemu/tickemu"

// Module is the Go module a linked-in plugin was compiled from, as the
// binary's build information records it (`go version -m` shows the same).
type Module struct {
	Path    string // module path, e.g. github.com/tickemu/tickemu/examples/fixed
	Version string // its version: a tag, a pseudo-version, or (devel) for the main module
	Replace string // the replacement (a directory or module@version) when go.mod replaced it
}

// String is "PATH VERSION" or "PATH VERSION => REPLACE".
func (m Module) String() string {
	s := m.Path + " " + m.Version
	if m.Replace != "" {
		s += " => " + m.Replace
	}
	return s
}

// FactoryModule returns the module that defines f.New when that is not
// tickemu itself: the plugin was linked in by a custom build (`tickemu build
// --with`). ok is false for the builtins and when the binary carries no build
// information.
func FactoryModule(f sdk.Factory) (m Module, ok bool) {
	if f.New == nil {
		return Module{}, false
	}
	fn := runtime.FuncForPC(reflect.ValueOf(f.New).Pointer())
	if fn == nil {
		return Module{}, false
	}
	pkg := funcPackage(fn.Name())
	bi, ok := debug.ReadBuildInfo()
	if !ok || pkg == "" {
		return Module{}, false
	}
	best := moduleOf(pkg, bi)
	if best == nil || best.Path == tickemuModule {
		return Module{}, false
	}
	m = Module{Path: best.Path, Version: best.Version}
	if r := best.Replace; r != nil {
		m.Replace = r.Path
		if r.Version != "" && r.Version != "(devel)" {
			m.Replace += "@" + r.Version
		}
	}
	return m, true
}

// moduleOf is the module of bi (main or dependency) whose path is the
// longest prefix of package path pkg.
func moduleOf(pkg string, bi *debug.BuildInfo) *debug.Module {
	var best *debug.Module
	for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		if m.Path == "" || !(pkg == m.Path || strings.HasPrefix(pkg, m.Path+"/")) {
			continue
		}
		if best == nil || len(m.Path) > len(best.Path) {
			best = m
		}
	}
	return best
}

// funcPackage is the package path of a function's symbol name, e.g.
// "example.com/x/y.v2.init.func1" -> "example.com/x/y.v2". The linker writes
// the dots of the last path element as %2e.
func funcPackage(sym string) string {
	slash := strings.LastIndex(sym, "/")
	dot := strings.Index(sym[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	p := sym[:slash+1+dot]
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	return p
}
