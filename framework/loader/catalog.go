package loader

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/internal/shim"
	"github.com/tickemu/tickemu/framework/sdk"
)

// Isolation says where a plugin runs.
type Isolation string

// Isolations; the HCL attribute `isolation` takes these values.
const (
	// Default: in process for builtins, in a process for binaries.
	Default Isolation = ""
	// InProcess calls the builtin's value directly: no serialisation.
	InProcess Isolation = "inprocess"
	// Process runs the plugin in its own process over go-plugin gRPC.
	Process Isolation = "process"
)

// SourceBuiltin is the Entry.Source of a builtin plugin.
const SourceBuiltin = "builtin"

// DefaultStartTimeout bounds a plugin process's start and handshake.
const DefaultStartTimeout = 30 * time.Second

// Options configure a Catalog.
type Options struct {
	// Builtins are the plugins linked into tickemu.
	Builtins []sdk.Factory
	// Self is the tickemu executable, re-executed as `Self plugin serve KIND
	// NAME` to run a builtin with Process isolation; "" disables that.
	Self string
	// Path is the plugin search path (see SearchPath).
	Path []string
	// Logger receives the loader's messages and every plugin's log lines.
	Logger zerolog.Logger
	// CallTimeout bounds each call to a plugin process; 0 means
	// shim.DefaultCallTimeout (30 s).
	CallTimeout time.Duration
	// StartTimeout bounds a plugin process's start; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// TailLines is how many stderr lines of a plugin process are kept for
	// errors; 0 means logging.DefaultTailLines.
	TailLines int
	// Env adds "KEY=value" entries to plugin processes' environment.
	Env []string
	// AutoMTLS turns on go-plugin's mutual TLS (see the package doc).
	AutoMTLS bool
}

// Entry is one plugin the catalog can open, for `tickemu plugins`.
type Entry struct {
	Kind        sdk.Kind
	Name        string
	Version     string
	Description string
	// Source is SourceBuiltin (linked into this binary) or the path of the
	// binary.
	Source string
	// Module is set for a plugin linked in from a module other than tickemu
	// (a custom build's extra): where its code comes from (FactoryModule).
	Module *Module
	Schema sdk.Schema
	// Shadowed: a builtin, or a binary earlier on the search path, provides
	// the same kind and name and is the one Open uses.
	Shadowed bool
	// Err is why a binary could not be described (Kind is then empty and
	// Name is the NAME of its file).
	Err error
}

// Catalog finds plugins and opens instances of them. Safe for concurrent use.
type Catalog struct {
	opts     Options
	log      zerolog.Logger
	builtins map[key]sdk.Factory
	binaries []binary

	mu        sync.Mutex
	described map[string]*description // by binary path
}

// key identifies a plugin.
type key struct {
	kind sdk.Kind
	name string
}

func (k key) String() string { return string(k.kind) + "/" + k.name }

// description caches what a binary serves.
type description struct {
	once  sync.Once
	descs []shim.Description
	err   error
}

// New returns a catalog of o.Builtins and the binaries on o.Path. It scans
// the path but starts no process; binaries are described on first need.
func New(o Options) (*Catalog, error) {
	c := &Catalog{
		opts:      o,
		log:       o.Logger,
		builtins:  make(map[key]sdk.Factory),
		described: make(map[string]*description),
	}
	for _, f := range o.Builtins {
		k := key{f.Kind, f.Name}
		if !isKind(f.Kind) {
			return nil, fmt.Errorf("%w %q for builtin %q (kinds: %s)", ErrUnknownKind, f.Kind, f.Name, kindList())
		}
		if f.Name == "" || f.New == nil {
			return nil, fmt.Errorf("loader: builtin %s plugin %q needs a name and a New function", f.Kind, f.Name)
		}
		if _, dup := c.builtins[k]; dup {
			return nil, fmt.Errorf("loader: builtin %s plugin %q is listed twice", f.Kind, f.Name)
		}
		c.builtins[k] = f
	}
	c.binaries = scan(o.Path)
	return c, nil
}

func isKind(k sdk.Kind) bool {
	for _, x := range shim.Kinds() {
		if x == k {
			return true
		}
	}
	return false
}

func kindList() string {
	var s []string
	for _, k := range shim.Kinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// describe returns what binary b serves, starting it once.
func (c *Catalog) describe(b binary) ([]shim.Description, error) {
	c.mu.Lock()
	d, ok := c.described[b.path]
	if !ok {
		d = &description{}
		c.described[b.path] = d
	}
	c.mu.Unlock()
	d.once.Do(func() {
		c.log.Debug().Str("path", b.path).Msg("describing plugin binary")
		d.descs, d.err = c.describeBinary(b)
	})
	return d.descs, d.err
}

// found is where a plugin comes from.
type found struct {
	builtin *sdk.Factory
	bin     binary
	desc    shim.Description
}

func (f found) source() string {
	if f.builtin != nil {
		return SourceBuiltin
	}
	return f.bin.path
}

// lookup resolves kind/name: a builtin first, then the binary named after
// the plugin, then any other binary that serves it (in file name order).
func (c *Catalog) lookup(kind sdk.Kind, name string) (found, error) {
	if !isKind(kind) {
		return found{}, fmt.Errorf("%w %q (kinds: %s)", ErrUnknownKind, kind, kindList())
	}
	k := key{kind, name}
	if f, ok := c.builtins[k]; ok {
		return found{builtin: &f}, nil
	}
	// The binary named after the plugin first: usually the only one started.
	order := make([]binary, 0, len(c.binaries))
	for _, b := range c.binaries {
		if b.name == name {
			order = append([]binary{b}, order...)
		} else {
			order = append(order, b)
		}
	}
	for _, b := range order {
		descs, err := c.describe(b)
		if err != nil {
			if b.name == name {
				return found{}, fmt.Errorf("%s plugin %q: %w", kind, name, err)
			}
			continue
		}
		for _, d := range descs {
			if d.Info.Kind == kind && d.Info.Name == name {
				return found{bin: b, desc: d}, nil
			}
		}
	}
	return found{}, fmt.Errorf("%w: no %s plugin %q (available: %s)", ErrNotFound, kind, name, c.available(kind))
}

// available lists the plugins of kind, for errors.
func (c *Catalog) available(kind sdk.Kind) string {
	var s []string
	for _, e := range c.List() {
		if e.Kind == kind && !e.Shadowed {
			s = append(s, fmt.Sprintf("%s (%s)", e.Name, e.Source))
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// List returns every plugin: builtins, then what each binary serves, ordered
// by kind, name and source (builtins first, then binaries in search order),
// and binaries that could not be described (at the end). Describing a binary
// starts it once.
func (c *Catalog) List() []Entry {
	var out, broken []Entry
	for k, f := range c.builtins {
		p := f.New()
		e := Entry{Kind: k.kind, Name: k.name, Version: p.Info().Version,
			Description: p.Info().Description, Source: SourceBuiltin, Schema: p.Schema()}
		if m, ok := FactoryModule(f); ok {
			e.Module = &m
		}
		out = append(out, e)
	}
	for _, b := range c.binaries {
		descs, err := c.describe(b)
		if err != nil {
			broken = append(broken, Entry{Name: b.name, Source: b.path, Err: err})
			continue
		}
		for _, d := range descs {
			out = append(out, Entry{Kind: d.Info.Kind, Name: d.Info.Name, Version: d.Info.Version,
				Description: d.Info.Description, Source: b.path, Schema: d.Schema})
		}
	}
	rank := make(map[string]int, len(c.binaries))
	for i, b := range c.binaries {
		rank[b.path] = i + 1
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return rank[a.Source] < rank[b.Source] // builtin ranks 0
	})
	for i := 1; i < len(out); i++ {
		if out[i].Kind == out[i-1].Kind && out[i].Name == out[i-1].Name {
			out[i].Shadowed = true
		}
	}
	return append(out, broken...)
}

// Describe returns the Info and Schema of kind/name, which the config layer
// needs to decode the plugin's block. For a binary it may start the binary
// once (the answer is cached).
func (c *Catalog) Describe(kind sdk.Kind, name string) (sdk.Info, sdk.Schema, error) {
	f, err := c.lookup(kind, name)
	if err != nil {
		return sdk.Info{}, sdk.Schema{}, err
	}
	if f.builtin != nil {
		p := f.builtin.New()
		return p.Info(), p.Schema(), nil
	}
	return f.desc.Info, f.desc.Schema, nil
}

// Open starts an instance of kind/name with isolation iso.
func (c *Catalog) Open(kind sdk.Kind, name string, iso Isolation) (*Instance, error) {
	f, err := c.lookup(kind, name)
	if err != nil {
		return nil, err
	}
	k := key{kind, name}
	switch iso {
	case Default, InProcess, Process:
	default:
		return nil, fmt.Errorf("%w: %s plugin %q: unknown isolation %q (want %q or %q)", ErrIsolation, kind, name, iso, InProcess, Process)
	}
	if f.builtin != nil && iso != Process {
		return c.openInProcess(k, *f.builtin)
	}
	if f.builtin == nil && iso == InProcess {
		return nil, fmt.Errorf("%w: %s plugin %q is the binary %s; only builtins run in process", ErrIsolation, kind, name, f.bin.path)
	}
	var cmd *exec.Cmd
	if f.builtin != nil {
		if c.opts.Self == "" {
			return nil, fmt.Errorf("%w: %s plugin %q: running a builtin in a process needs the tickemu executable", ErrIsolation, kind, name)
		}
		cmd = exec.Command(c.opts.Self, "plugin", "serve", string(kind), name)
	} else {
		cmd = exec.Command(f.bin.path)
	}
	return c.openProcess(k, f.source(), cmd)
}

// openInProcess makes the builtin's value.
func (c *Catalog) openInProcess(k key, f sdk.Factory) (*Instance, error) {
	p := f.New()
	if !shim.Implements(k.kind, p) {
		return nil, fmt.Errorf("loader: builtin %s made a %T, which is not a %s plugin", k, p, k.kind)
	}
	if ls, ok := p.(sdk.LoggerSetter); ok {
		ls.SetLogger(c.log.With().Str("plugin", k.String()).Logger())
	}
	return &Instance{key: k, source: SourceBuiltin, iso: InProcess, plugin: p}, nil
}
