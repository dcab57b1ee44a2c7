// Package custombuild builds a tickemu binary that links extra plugin modules
// in process next to the builtins, the way xcaddy (Caddy), xk6 (k6) and the
// OpenTelemetry Collector builder do: it writes a small main module in a
// temporary directory, lets the go command resolve it, and runs go build.
//
// A plugin module takes part in one way: its root package exports
//
//	func Factories() []sdk.Factory
//
// and the generated main passes every module's factories to cli.Main. The
// result runs those plugins in process by default; `isolation = "process"`
// runs one in its own process, the binary re-executing itself as
// `plugin serve KIND NAME` exactly as it does for the builtins.
package custombuild

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"text/template"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// TickemuModule is the module path every custom build requires.
const TickemuModule = "github.com/tickemu/tickemu"

// Plugin is one --with MODULE[@VERSION][=DIR].
type Plugin struct {
	Module  string // module path; its root package exports Factories()
	Version string // required version; "" means latest, or v0.0.0 with Dir
	Dir     string // absolute local directory replacing the module, or ""
}

func (p Plugin) String() string {
	s := p.Module
	if p.Version != "" {
		s += "@" + p.Version
	}
	if p.Dir != "" {
		s += " => " + p.Dir
	}
	return s
}

// ParseWith parses MODULE[@VERSION][=DIR]; a relative DIR is taken from the
// current directory.
func ParseWith(s string) (Plugin, error) {
	left, dir, hasDir := strings.Cut(s, "=")
	mod, ver, hasVer := strings.Cut(left, "@")
	p := Plugin{Module: mod, Version: ver}
	switch {
	case mod == "":
		return p, fmt.Errorf("--with %q: want MODULE[@VERSION][=DIR]", s)
	case hasVer && ver == "":
		return p, fmt.Errorf("--with %q: empty version after @", s)
	case hasDir && dir == "":
		return p, fmt.Errorf("--with %q: empty directory after =", s)
	case strings.ContainsAny(mod, " \t\"'\\") || strings.HasPrefix(mod, "/") || strings.HasPrefix(mod, "."):
		return p, fmt.Errorf("--with %q: %q is not a module path (a local directory goes after =)", s, mod)
	case mod == TickemuModule:
		return p, fmt.Errorf("--with %q: tickemu itself is always linked in", s)
	}
	if hasDir {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return p, fmt.Errorf("--with %q: %v", s, err)
		}
		p.Dir = abs
	}
	return p, nil
}

// Tickemu is the tickemu the custom build links: a local checkout (Dir) or a
// released Version.
type Tickemu struct {
	Dir     string
	Version string
}

func (t Tickemu) String() string {
	if t.Dir != "" {
		return TickemuModule + " => " + t.Dir
	}
	return TickemuModule + "@" + t.Version
}

// ParseTickemu parses --tickemu VERSION|DIR: a value naming an existing
// directory is a checkout, anything else a version.
func ParseTickemu(s string) (Tickemu, error) {
	if fi, err := os.Stat(s); err == nil && fi.IsDir() {
		abs, err := filepath.Abs(s)
		if err != nil {
			return Tickemu{}, err
		}
		return Tickemu{Dir: abs}, nil
	}
	if !strings.HasPrefix(s, "v") {
		return Tickemu{}, fmt.Errorf("--tickemu %q: neither a directory nor a version (vX.Y.Z)", s)
	}
	return Tickemu{Version: s}, nil
}

// ThisTickemu is the tickemu the running binary was built from: the checkout
// it was compiled in (its source files are still there), else the module
// version its build information records. ok is false when neither is known.
func ThisTickemu() (Tickemu, bool) {
	// Without -trimpath the compiler records this file's absolute path; in
	// a checkout (or a replace to one) the module root is two levels up.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Join(filepath.Dir(file), "..", "..")
		if isTickemuCheckout(root) {
			return Tickemu{Dir: filepath.Clean(root)}, true
		}
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Tickemu{}, false
	}
	for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		if m.Path != TickemuModule {
			continue
		}
		if m.Replace != nil && filepath.IsAbs(m.Replace.Path) && isTickemuCheckout(m.Replace.Path) {
			return Tickemu{Dir: m.Replace.Path}, true
		}
		if strings.HasPrefix(m.Version, "v") && !strings.HasPrefix(m.Version, "v0.0.0-0001") {
			return Tickemu{Version: m.Version}, true
		}
	}
	return Tickemu{}, false
}

func isTickemuCheckout(dir string) bool {
	path, err := modulePath(filepath.Join(dir, "go.mod"))
	return err == nil && path == TickemuModule
}

// modulePath reads the module directive of a go.mod file.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if p := modfile.ModulePath(b); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s: no module directive", gomod)
}

// Options configure Build.
type Options struct {
	Plugins []Plugin
	Tickemu Tickemu
	// Output is the binary to write.
	Output string
	// Go is the go command; "" means "go" on $PATH.
	Go string
	// Env is the go command's environment; nil means os.Environ().
	Env []string
	// Log receives the go commands run and their output.
	Log io.Writer
	// Keep leaves the generated module in place (its directory is Result.Dir).
	Keep bool
}

// Result is what Build did.
type Result struct {
	Dir string // the generated module (removed unless Options.Keep)
}

// ErrNoFactories marks a plugin module whose root package does not export
// Factories() []sdk.Factory.
var ErrNoFactories = errors.New("a plugin module's root package must export func Factories() []sdk.Factory")

// Build writes the main module, resolves it and builds o.Output.
//
// When tickemu and every plugin come from local directories the build needs
// no network: the generated go.mod requires what those modules' go.mod files
// require (each module at the highest version any of them names) and the
// go.sum is theirs, so nothing outside the module cache is looked up. A
// plugin given by version is fetched with go get, then go mod tidy settles
// the requirements.
func Build(ctx context.Context, o Options) (Result, error) {
	if len(o.Plugins) == 0 {
		return Result{}, errors.New("nothing to link: give at least one --with MODULE")
	}
	if o.Tickemu.Dir == "" && o.Tickemu.Version == "" {
		return Result{}, errors.New("no tickemu to build against: give --tickemu VERSION or --tickemu DIR (a checkout)")
	}
	mf, sums, get, err := mainModule(o)
	if err != nil {
		return Result{}, err
	}
	out, err := filepath.Abs(o.Output)
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "tickemu-build-")
	if err != nil {
		return Result{}, err
	}
	res := Result{Dir: dir}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	src, err := MainSource(o.Plugins)
	if err != nil {
		return res, err
	}
	for name, b := range map[string][]byte{"go.mod": mf, "go.sum": sums, "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return res, err
		}
	}
	g := &goCmd{ctx: ctx, dir: dir, bin: o.Go, env: o.Env, log: o.Log}
	if len(get) > 0 {
		if err := g.run(append([]string{"get"}, get...)...); err != nil {
			return res, err
		}
		if err := g.run("mod", "tidy"); err != nil {
			return res, err
		}
	}
	for _, p := range o.Plugins {
		pdir := p.Dir
		if pdir == "" {
			// Fetched by version: where the go command put it.
			if pdir, err = g.output("list", "-mod=mod", "-f", "{{.Dir}}", p.Module); err != nil {
				return res, err
			}
		}
		if err := checkFactories(p.Module, pdir); err != nil {
			return res, err
		}
	}
	if err := g.run("build", "-mod=mod", "-o", out, "."); err != nil {
		if strings.Contains(g.lastErr, ".Factories") {
			return res, fmt.Errorf("%w (docs/plugins.md): %v", ErrNoFactories, err)
		}
		return res, err
	}
	return res, nil
}

// mainModule returns the generated go.mod and go.sum, and the module@version
// arguments go get must still resolve.
func mainModule(o Options) (gomod, gosum []byte, get []string, err error) {
	req := map[string]string{} // module path -> highest version required
	need := func(path, v string) {
		if old, ok := req[path]; !ok || semver.Compare(v, old) > 0 {
			req[path] = v
		}
	}
	var sums [][]byte
	goVersion := ""
	// Replace directives of the local modules: the go command reads only the
	// main module's, so each is carried into the generated go.mod (a
	// relative directory made absolute), or a dependency the plugin's
	// go.mod points at a directory would be looked up on the module proxy.
	// The build's own replaces (--tickemu DIR, --with MOD=DIR) win; two
	// modules replacing one path differently is an error.
	type carried struct{ to, from string }
	theirs := map[string]carried{}
	local := func(dir, want string) error {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return err
		}
		f, err := modfile.Parse(filepath.Join(dir, "go.mod"), b, nil)
		if err != nil {
			return err
		}
		if f.Module == nil || f.Module.Mod.Path != want {
			got := "no module"
			if f.Module != nil {
				got = "module " + f.Module.Mod.Path
			}
			return fmt.Errorf("%s/go.mod declares %s, not %s", dir, got, want)
		}
		for _, r := range f.Require {
			need(r.Mod.Path, r.Mod.Version)
		}
		for _, r := range f.Replace {
			key, to := r.Old.Path, r.New.Path
			if r.Old.Version != "" {
				key += "@" + r.Old.Version
			}
			if modfile.IsDirectoryPath(to) {
				if !filepath.IsAbs(to) {
					to = filepath.Join(dir, to)
				}
			} else {
				to += " " + r.New.Version
			}
			if c, ok := theirs[key]; ok && c.to != to {
				return fmt.Errorf("%s/go.mod replaces %s with %s, but %s replaces it with %s", dir, key, to, c.from, c.to)
			}
			theirs[key] = carried{to: to, from: filepath.Join(dir, "go.mod")}
		}
		if f.Go != nil && (goVersion == "" || gover(f.Go.Version) > gover(goVersion)) {
			goVersion = f.Go.Version
		}
		sums = append(sums, readSum(dir))
		return nil
	}
	var replace [][2]string
	if t := o.Tickemu; t.Dir != "" {
		if err := local(t.Dir, TickemuModule); err != nil {
			return nil, nil, nil, fmt.Errorf("--tickemu %s: %w", t.Dir, err)
		}
		replace = append(replace, [2]string{TickemuModule, t.Dir})
		need(TickemuModule, "v0.0.0")
	} else {
		need(TickemuModule, t.Version)
	}
	for _, p := range o.Plugins {
		if p.Dir == "" {
			v := p.Version
			if v == "" {
				v = "latest"
			}
			get = append(get, p.Module+"@"+v)
			continue
		}
		if err := local(p.Dir, p.Module); err != nil {
			return nil, nil, nil, fmt.Errorf("--with %s: %w", p, err)
		}
		v := p.Version
		if v == "" {
			v = "v0.0.0"
		}
		need(p.Module, v)
		replace = append(replace, [2]string{p.Module, p.Dir})
	}
	f := &modfile.File{}
	if err := f.AddModuleStmt("tickemu-custom"); err != nil {
		return nil, nil, nil, err
	}
	if goVersion != "" {
		if err := f.AddGoStmt(goVersion); err != nil {
			return nil, nil, nil, err
		}
	}
	paths := make([]string, 0, len(req))
	for p := range req {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f.AddNewRequire(p, req[p], false)
	}
	own := map[string]bool{}
	for _, r := range replace {
		own[r[0]] = true
		if err := f.AddReplace(r[0], "", r[1], ""); err != nil {
			return nil, nil, nil, err
		}
	}
	keys := make([]string, 0, len(theirs))
	for k := range theirs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path, version, _ := strings.Cut(k, "@")
		if own[path] {
			continue
		}
		to, toVersion, _ := strings.Cut(theirs[k].to, " ")
		if modfile.IsDirectoryPath(theirs[k].to) {
			to, toVersion = theirs[k].to, ""
		}
		if err := f.AddReplace(path, version, to, toVersion); err != nil {
			return nil, nil, nil, err
		}
	}
	gomod, err = f.Format()
	return gomod, mergeSums(sums), get, err
}

// gover makes a go directive comparable as a semantic version.
func gover(v string) string { return "v" + v }

// readSum returns dir/go.sum, or nothing.
func readSum(dir string) []byte {
	b, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	return b
}

// mergeSums joins go.sum files, each line once, in first-seen order.
func mergeSums(files [][]byte) []byte {
	seen := map[string]bool{}
	var out bytes.Buffer
	for _, f := range files {
		for _, line := range strings.Split(string(f), "\n") {
			if line = strings.TrimSpace(line); line == "" || seen[line] {
				continue
			}
			seen[line] = true
			out.WriteString(line + "\n")
		}
	}
	return out.Bytes()
}

var mainTmpl = template.Must(template.New("main").Parse(`// Code generated by tickemu build; DO NOT EDIT.

// Command tickemu is tickemu with these plugin modules linked in:
{{range .}}//	{{.Module}}
{{end}}package main

import (
	"os"
	"slices"

	"github.com/tickemu/tickemu/framework/cli"
{{range $i, $p := .}}	plugin{{$i}} "{{$p.Module}}"
{{end}})

func main() {
	os.Exit(cli.Main(slices.Concat({{range $i, $p := .}}
		plugin{{$i}}.Factories(),{{end}}
	)...))
}
`))

// MainSource is the generated main package for plugins.
func MainSource(plugins []Plugin) ([]byte, error) {
	var b bytes.Buffer
	if err := mainTmpl.Execute(&b, plugins); err != nil {
		return nil, err
	}
	return format.Source(b.Bytes())
}

// goCmd runs the go command in the generated module.
type goCmd struct {
	ctx     context.Context
	dir     string
	bin     string
	env     []string
	log     io.Writer
	lastErr string
}

func (g *goCmd) run(args ...string) error {
	_, err := g.exec(false, args...)
	return err
}

// output runs the go command and returns its standard output, trimmed.
func (g *goCmd) output(args ...string) (string, error) {
	return g.exec(true, args...)
}

// exec runs the go command; with capture its standard output is returned
// instead of going to the log.
func (g *goCmd) exec(capture bool, args ...string) (string, error) {
	bin := g.bin
	if bin == "" {
		bin = "go"
	}
	cmd := exec.CommandContext(g.ctx, bin, args...)
	cmd.Dir = g.dir
	env := g.env
	if env == nil {
		env = os.Environ()
	}
	// The generated module stands alone: no go.work of the caller applies.
	cmd.Env = append(env[:len(env):len(env)], "GOWORK=off")
	var stderr bytes.Buffer
	w := io.Writer(&stderr)
	if g.log != nil {
		fmt.Fprintf(g.log, "tickemu build: %s %s\n", bin, quoteArgs(args))
		w = io.MultiWriter(&stderr, g.log)
	}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, w
	if capture {
		cmd.Stdout = &stdout
	}
	if err := cmd.Run(); err != nil {
		g.lastErr = stderr.String()
		msg := strings.TrimSpace(g.lastErr)
		if g.log != nil {
			msg = "its output is above"
		}
		return "", fmt.Errorf("%s %s: %v (%s)", bin, quoteArgs(args), err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsAny(a, " \t\"'") {
			b, _ := json.Marshal(a)
			q[i] = string(b)
		}
	}
	return strings.Join(q, " ")
}
