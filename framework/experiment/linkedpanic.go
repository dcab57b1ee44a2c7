package experiment

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
)

// recoverLinkedPanic, deferred by Run and Validate, turns a panic raised
// inside a linked-in plugin into the *sdk.TransportError a plugin process's
// panic gives: the same message (the plugin, the call, "plugin T panicked:
// V"), the plugin's frames as its stack, exit status 1 from the command
// line. Out of process the plugin's server recovers the panic
// (framework/sdk/shim); in process nothing did, and a plugin author's
// nil map was a Go crash of the host with exit status 2, as if the user
// had mistyped a flag. A panic no plugin raised is the host's own bug and
// goes on as a crash. res may be nil (Validate).
func (b *built) recoverLinkedPanic(res **Result, err *error) {
	r := recover()
	if r == nil {
		return
	}
	te := linkedPanic(r, b.linkedPlugins())
	if te == nil {
		panic(r)
	}
	if res != nil {
		*res = nil
	}
	*err = te
}

// linkedPlugin is an opened plugin and the package its code is in.
type linkedPlugin struct {
	kind    sdk.Kind
	name    string
	typ     string // the plugin's type, as %T prints it
	pkgPath string
}

// linkedPlugins lists the plugins opened so far with their packages (an
// out-of-process plugin's value is the host's client: it never panics, and
// its package is the host's).
func (b *built) linkedPlugins() []linkedPlugin {
	var out []linkedPlugin
	for _, in := range b.instances {
		p := in.Plugin()
		info := p.Info()
		out = append(out, linkedPluginOf(p, info.Kind, info.Name))
	}
	return out
}

// linkedPluginOf records plugin p's package.
func linkedPluginOf(p sdk.Plugin, kind sdk.Kind, name string) linkedPlugin {
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return linkedPlugin{kind: kind, name: name, typ: fmt.Sprintf("%T", p), pkgPath: t.PkgPath()}
}

// linkedPanic attributes the panic in progress (called from the deferred
// function, while the panicking frames are still on the stack) to the
// plugin whose code raised it. Going out from the panic, the first frame of
// a plugin's package names the plugin, and the outermost frame of that
// package in the same run of frames is the call the host made (the SDK
// method). nil: no plugin's code is on the stack below the host's.
func linkedPanic(v any, plugins []linkedPlugin) *sdk.TransportError {
	pcs := make([]uintptr, 256)
	n := runtime.Callers(1, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var fns []string
	for {
		f, more := frames.Next()
		fns = append(fns, f.Function)
		if !more {
			break
		}
	}
	// The frames below the last runtime panic frame are the ones that
	// panicked (a deferred recover that panicked again, as Kernel.Run's
	// does for values it does not know, adds a panic of its own above them).
	start := 0
	for i, fn := range fns {
		if fn == "runtime.gopanic" {
			start = i + 1
		}
	}
	p, call := pluginCall(fns[start:], plugins)
	if p == nil {
		return nil
	}
	return &sdk.TransportError{Kind: p.kind, Name: p.name, Call: methodName(call),
		Err:   errors.New("plugin " + p.typ + " panicked: " + fmt.Sprint(v)),
		Stack: panicFrames(string(debug.Stack()), call)}
}

// pluginCall finds, in frames listed innermost first, the first frame of a
// linked-in plugin's package and the outermost frame of that package in the
// same run of frames: the plugin and the call the host made into it (the
// SDK method). nil: no plugin's code is among the frames.
func pluginCall(fns []string, plugins []linkedPlugin) (*linkedPlugin, string) {
	for i := 0; i < len(fns); i++ {
		p := pluginOf(funcPackage(fns[i]), plugins)
		if p == nil {
			continue
		}
		call := fns[i]
		for i+1 < len(fns) && funcPackage(fns[i+1]) == p.pkgPath {
			i++
			call = fns[i]
		}
		return p, call
	}
	return nil, ""
}

// pluginOf returns the plugin whose code is in package pkg.
func pluginOf(pkg string, plugins []linkedPlugin) *linkedPlugin {
	for i := range plugins {
		if plugins[i].pkgPath == pkg && pkg != "" {
			return &plugins[i]
		}
	}
	return nil
}

// funcPackage is the import path of a function as runtime.Frame names it:
// "example.com/x/y.(*T).M" -> "example.com/x/y".
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return fn[:slash+1+dot]
}

// methodName is the last element of a function's name: the method the host
// called ("Select").
func methodName(fn string) string {
	return fn[strings.LastIndexByte(fn, '.')+1:]
}

// panicFrames trims a debug.Stack() taken while a panic unwinds to what a
// plugin author reads, as a plugin process's server does: the goroutine
// header, then the frames from the one that panicked out to the plugin's
// outermost frame (last, the function the host called).
func panicFrames(stack, last string) []string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	start := -1
	for i := 1; i+1 < len(lines); i += 2 {
		if strings.HasPrefix(lines[i], "panic(") {
			start = i + 2
		}
	}
	if start < 0 || start >= len(lines) {
		return lines
	}
	out := []string{lines[0]}
	for i := start; i < len(lines); i += 2 {
		out = append(out, lines[i])
		if i+1 < len(lines) {
			out = append(out, lines[i+1])
		}
		if strings.HasPrefix(lines[i], last+"(") {
			break
		}
	}
	return out
}
