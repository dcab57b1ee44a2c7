package loader

import (
	"runtime/debug"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

func TestFuncPackage(t *testing.T) {
	tests := []struct{ sym, want string }{
		{"github.com/tickemu/tickemu/plugins/wheel.New", "github.com/tickemu/tickemu/plugins/wheel"},
		{"github.com/tickemu/tickemu/examples/fixed.init.func1", "github.com/tickemu/tickemu/examples/fixed"},
		{"gopkg.in/yaml%2ev3.Factories.func2", "gopkg.in/yaml.v3"},
		{"main.main", "main"},
		{"nodot", ""},
	}
	for _, tt := range tests {
		if got := funcPackage(tt.sym); got != tt.want {
			t.Errorf("funcPackage(%q) = %q, want %q", tt.sym, got, tt.want)
		}
	}
}

func TestModuleOf(t *testing.T) {
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "tickemu-custom", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/tickemu/tickemu", Version: "v0.3.0"},
			{Path: "github.com/tickemu/tickemu/examples/fixed", Version: "v0.0.0",
				Replace: &debug.Module{Path: "/src/fixed"}},
		},
	}
	tests := []struct{ pkg, want string }{
		{"github.com/tickemu/tickemu/plugins/wheel", "github.com/tickemu/tickemu"},
		{"github.com/tickemu/tickemu/examples/fixed", "github.com/tickemu/tickemu/examples/fixed"},
		{"github.com/tickemu/tickemu/examples/fixed/sub", "github.com/tickemu/tickemu/examples/fixed"},
		{"github.com/tickemu/tickemu/examples/fixedx", "github.com/tickemu/tickemu"},
		{"tickemu-custom", "tickemu-custom"},
		{"example.com/other", ""},
	}
	for _, tt := range tests {
		got := ""
		if m := moduleOf(tt.pkg, bi); m != nil {
			got = m.Path
		}
		if got != tt.want {
			t.Errorf("moduleOf(%q) = %q, want %q", tt.pkg, got, tt.want)
		}
	}
}

// TestFactoryModuleBuiltin: tickemu's own plugins are not "linked-in from
// another module"; a factory with no New has no module.
func TestFactoryModuleBuiltin(t *testing.T) {
	f := sdk.Factory{Kind: sdk.KindClockEvent, Name: "x", New: func() sdk.Plugin { return nil }}
	if m, ok := FactoryModule(f); ok {
		t.Errorf("FactoryModule(a loader test factory) = %v, want none (module %s)", m, tickemuModule)
	}
	if _, ok := FactoryModule(sdk.Factory{}); ok {
		t.Error("FactoryModule(no New) reported a module")
	}
}

func TestModuleString(t *testing.T) {
	m := Module{Path: "example.com/p", Version: "v0.0.0", Replace: "/src/p"}
	if got, want := m.String(), "example.com/p v0.0.0 => /src/p"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
