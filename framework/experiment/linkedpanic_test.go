package experiment

import (
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

func TestFuncPackage(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/tickemu/tickemu/plugins/hrtimer.(*Base).Start": "github.com/tickemu/tickemu/plugins/hrtimer",
		"example.com/x.y/z.F":            "example.com/x.y/z",
		"example.com/m/v2/p.(*T[...]).M": "example.com/m/v2/p",
		"runtime.gopanic":                "runtime",
		"github.com/a/b.F.func1":         "github.com/a/b",
		"":                               "",
	} {
		if got := funcPackage(fn); got != want {
			t.Errorf("funcPackage(%q) = %q, want %q", fn, got, want)
		}
	}
}

// panicHere is a stand-in for a plugin's code: this package plays the
// plugin's package.
func panicHere() { panic("boom") }

func callPlugin() { panicHere() }

// TestLinkedPanicAttribution: a panic in a listed plugin's package is that
// plugin's, with the outermost frame of the package as the call; a panic in
// no listed plugin's code is not attributed (the host's own bug goes on as
// a crash).
func TestLinkedPanicAttribution(t *testing.T) {
	self := "github.com/tickemu/tickemu/framework/experiment"
	catch := func(plugins []linkedPlugin) (te *sdk.TransportError) {
		defer func() {
			r := recover()
			te = linkedPanic(r, plugins)
		}()
		callPlugin()
		return nil
	}
	te := catch([]linkedPlugin{{kind: sdk.KindGovernor, name: "g", typ: "*x.G", pkgPath: "example.com/other"},
		{kind: sdk.KindHRTimer, name: "h", typ: "*experiment.H", pkgPath: self}})
	if te == nil {
		t.Fatal("a panic in the plugin's package was not attributed")
	}
	// The outermost frame of the package: the test itself is in it, so the
	// run of frames goes out to the testing package.
	if te.Kind != sdk.KindHRTimer || te.Name != "h" || !strings.Contains(te.Err.Error(), "plugin *experiment.H panicked: boom") {
		t.Errorf("attributed to %s %q: %v", te.Kind, te.Name, te.Err)
	}
	if len(te.Stack) < 3 || !strings.HasPrefix(te.Stack[0], "goroutine ") || !strings.Contains(te.Stack[1], "panicHere") {
		t.Errorf("stack %q: want the goroutine header, then the panicking frame", te.Stack)
	}
	if te := catch([]linkedPlugin{{kind: sdk.KindGovernor, name: "g", pkgPath: "example.com/other"}}); te != nil {
		t.Errorf("a panic in no plugin's code was attributed to %s %q", te.Kind, te.Name)
	}
}

// TestWatchdogLeavesPluginProcessesToTheirDeadline: a plugin process's value
// is the host's client from framework/sdk/shim, whose own call deadline
// applies (with the pid in its message); the watchdog watches only linked-in
// code. A written-out package path went stale when the shim moved, and the
// watchdog raced the client's deadline.
func TestWatchdogLeavesPluginProcessesToTheirDeadline(t *testing.T) {
	if !strings.HasSuffix(shimPackage, "/framework/sdk/shim") {
		t.Fatalf("shimPackage = %q", shimPackage)
	}
	w := &watchdog{}
	w.opened(linkedPlugin{kind: sdk.KindGovernor, name: "process", pkgPath: shimPackage}, nil)
	w.opened(linkedPlugin{kind: sdk.KindGovernor, name: "linked", pkgPath: "example.com/wheel"}, nil)
	if len(w.plugins) != 1 || w.plugins[0].name != "linked" {
		t.Errorf("watched %+v, want only the linked-in plugin", w.plugins)
	}
}
