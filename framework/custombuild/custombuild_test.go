package custombuild

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestParseWith(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want Plugin
		err  string
	}{
		{in: "example.com/p", want: Plugin{Module: "example.com/p"}},
		{in: "example.com/p@v1.2.3", want: Plugin{Module: "example.com/p", Version: "v1.2.3"}},
		{in: "example.com/p=/src/p", want: Plugin{Module: "example.com/p", Dir: "/src/p"}},
		{in: "example.com/p@v1.0.0=sub", want: Plugin{Module: "example.com/p", Version: "v1.0.0", Dir: filepath.Join(cwd, "sub")}},
		{in: "", err: "want MODULE"},
		{in: "=dir", err: "want MODULE"},
		{in: "example.com/p@", err: "empty version"},
		{in: "example.com/p=", err: "empty directory"},
		{in: "./local", err: "not a module path"},
		{in: "/abs/dir", err: "not a module path"},
		{in: "github.com/tickemu/tickemu", err: "always linked in"},
	}
	for _, tt := range tests {
		got, err := ParseWith(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseWith(%q) error = %v, want one containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseWith(%q) = %+v, %v, want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestMainSource(t *testing.T) {
	src, err := MainSource([]Plugin{{Module: "example.com/riscv"}, {Module: "example.com/heapbase", Version: "v0.2.0"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "main.go.golden", src)
}

// TestMainModule: the generated go.mod requires what the local modules
// require, each module at the highest version, and replaces the local ones.
func TestMainModule(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tickemu/go.mod", "module github.com/tickemu/tickemu\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/rs/zerolog v1.35.1\n\tgolang.org/x/sys v0.40.0 // indirect\n)\n")
	write("tickemu/go.sum", "github.com/rs/zerolog v1.35.1 h1:a=\ngolang.org/x/sys v0.40.0 h1:b=\n")
	write("plug/go.mod", "module example.com/plug\n\ngo 1.26.2\n\nrequire (\n\tgithub.com/tickemu/tickemu v0.0.0\n\tgolang.org/x/sys v0.50.0\n)\n\nreplace github.com/tickemu/tickemu => ../tickemu\n")
	write("plug/go.sum", "golang.org/x/sys v0.50.0 h1:c=\ngithub.com/rs/zerolog v1.35.1 h1:a=\n")
	// A plugin whose go.mod replaces its own dependencies: a directory
	// (relative to the plugin) and a module version; both are carried.
	write("dep/plug2/go.mod", "module example.com/plug2\n\ngo 1.26.0\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n\nreplace example.com/old v1.0.0 => example.com/new v1.2.0\n")
	o := Options{
		Tickemu: Tickemu{Dir: filepath.Join(dir, "tickemu")},
		Plugins: []Plugin{
			{Module: "example.com/plug", Dir: filepath.Join(dir, "plug")},
			{Module: "example.com/plug2", Dir: filepath.Join(dir, "dep/plug2")},
			{Module: "example.com/remote", Version: "v1.4.0"},
			{Module: "example.com/latest"},
		},
	}
	mod, sum, get, err := mainModule(o)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "go.mod.golden", []byte(strings.ReplaceAll(string(mod), dir, "$DIR")))
	golden(t, "go.sum.golden", sum)
	if want := "example.com/remote@v1.4.0 example.com/latest@latest"; strings.Join(get, " ") != want {
		t.Errorf("go get arguments = %q, want %q", get, want)
	}

	// Two plugins replacing one dependency differently.
	write("plug3/go.mod", "module example.com/plug3\n\ngo 1.26.0\n\nreplace example.com/dep => ./vendored/dep\n")
	o.Plugins = []Plugin{{Module: "example.com/plug2", Dir: filepath.Join(dir, "dep/plug2")}, {Module: "example.com/plug3", Dir: filepath.Join(dir, "plug3")}}
	if _, _, _, err := mainModule(o); err == nil || !strings.Contains(err.Error(), "replaces example.com/dep with "+filepath.Join(dir, "plug3/vendored/dep")) {
		t.Errorf("mainModule with conflicting replaces: err = %v", err)
	}

	o.Plugins = []Plugin{{Module: "example.com/other", Dir: filepath.Join(dir, "plug")}}
	if _, _, _, err := mainModule(o); err == nil || !strings.Contains(err.Error(), "declares module example.com/plug, not example.com/other") {
		t.Errorf("mainModule with the wrong module path: err = %v", err)
	}
	o.Tickemu = Tickemu{Dir: filepath.Join(dir, "plug")}
	if _, _, _, err := mainModule(o); err == nil || !strings.Contains(err.Error(), "--tickemu") {
		t.Errorf("mainModule with a non-tickemu checkout: err = %v", err)
	}
}

// TestThisTickemu: a test binary is built in this checkout, so the build
// links it by directory.
func TestThisTickemu(t *testing.T) {
	got, ok := ThisTickemu()
	if !ok || got.Dir == "" {
		t.Fatalf("ThisTickemu() = %+v, %v, want this checkout", got, ok)
	}
	if !isTickemuCheckout(got.Dir) {
		t.Errorf("ThisTickemu().Dir = %s holds no tickemu go.mod", got.Dir)
	}
}

func TestParseTickemu(t *testing.T) {
	dir := t.TempDir()
	if got, err := ParseTickemu(dir); err != nil || got.Dir != dir {
		t.Errorf("ParseTickemu(dir) = %+v, %v", got, err)
	}
	if got, err := ParseTickemu("v0.3.1"); err != nil || got.Version != "v0.3.1" {
		t.Errorf("ParseTickemu(v0.3.1) = %+v, %v", got, err)
	}
	if _, err := ParseTickemu("nosuchdir"); err == nil {
		t.Error("ParseTickemu(nosuchdir) accepted it")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestCheckFactories: the root package's Factories is checked before the
// build, so a missing or wrong one is named in the plugin's file (not as a
// compile error in the generated main).
func TestCheckFactories(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{name: "right", src: "package p\n\nimport \"github.com/tickemu/tickemu/framework/sdk\"\n\nfunc Factories() []sdk.Factory { return nil }\n"},
		{name: "renamed import", src: "package p\n\nimport s \"github.com/tickemu/tickemu/framework/sdk\"\n\nfunc Factories() []s.Factory { return nil }\n"},
		{name: "missing", src: "package p\n\nfunc Other() {}\n", want: "declares no Factories function"},
		{name: "one factory", src: "package p\n\nimport \"github.com/tickemu/tickemu/framework/sdk\"\n\nfunc Factories() sdk.Factory { return sdk.Factory{} }\n",
			want: "p.go:5:1: Factories is declared as func Factories() sdk.Factory; a plugin module's root package must export func Factories() []sdk.Factory"},
		{name: "takes an argument", src: "package p\n\nimport \"github.com/tickemu/tickemu/framework/sdk\"\n\nfunc Factories(n int) []sdk.Factory { return nil }\n",
			want: "Factories is declared as func Factories(n int) []sdk.Factory"},
		{name: "another package's Factory", src: "package p\n\nimport sdk \"example.com/other\"\n\nfunc Factories() []sdk.Factory { return nil }\n",
			want: "Factories is declared as"},
		{name: "a method", src: "package p\n\nimport \"github.com/tickemu/tickemu/framework/sdk\"\n\ntype T struct{}\n\nfunc (T) Factories() []sdk.Factory { return nil }\n",
			want: "declares no Factories function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			err := checkFactories("example.com/p", dir)
			if tc.want == "" {
				if err != nil {
					t.Errorf("err = %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrNoFactories) || !strings.HasPrefix(err.Error(), "--with example.com/p: ") {
				t.Errorf("err = %v, want --with example.com/p: ... %q (ErrNoFactories)", err, tc.want)
			}
		})
	}
}
