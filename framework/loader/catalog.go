package loader

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
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

// SourceLinkedIn is the Entry.Source prefix of a plugin linked into this
// binary from a module other than tickemu (`tickemu build --with`),
// followed by the module (Module.String).
const SourceLinkedIn = "linked-in"

// linkedSource is the source of a plugin linked into this binary:
// SourceBuiltin, or SourceLinkedIn and the module it comes from, so that
// listings, logs and warnings name a custom build's plugin by its module.
func linkedSource(f sdk.Factory) string {
	if m, ok := FactoryModule(f); ok {
		return SourceLinkedIn + " " + m.String()
	}
	return SourceBuiltin
}

// DefaultCallTimeout is the deadline of each plugin call when
// Options.CallTimeout is 0.
const DefaultCallTimeout = shim.DefaultCallTimeout

// NoCallTimeout as Options.CallTimeout turns the per-call deadline off, and
// the start deadline with it (for a plugin under a debugger).
const NoCallTimeout = shim.NoTimeout

// noDeadline is the start deadline with NoCallTimeout: go-plugin needs one.
const noDeadline = 365 * 24 * time.Hour

// DefaultDescribeTimeout bounds describing a plugin binary (start, handshake
// and the catalog call) when it is not in the description cache. Describing
// is a few milliseconds of work; a binary that takes longer is broken or
// not a plugin, and must not hold up a run that may not even need it.
const DefaultDescribeTimeout = 5 * time.Second

// SourceReattached is the Entry.Source prefix of a plugin reattached with
// --plugin-reattach: "reattached (pid N)".
const SourceReattached = "reattached"

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
	// CallTimeout bounds each call to a plugin process, describing a binary
	// included; 0 means shim.DefaultCallTimeout (5 s), NoCallTimeout none.
	CallTimeout time.Duration
	// GRPCOnly keeps every plugin session on its gRPC stream instead of the
	// session socket plugin processes offer on Unix (shim.Options.GRPCOnly);
	// also set by $TICKEMU_PLUGIN_TRANSPORT=grpc. For comparing the two.
	GRPCOnly bool
	// StartTimeout bounds a plugin process's start and go-plugin handshake;
	// 0 means the call timeout.
	StartTimeout time.Duration
	// DescribeTimeout bounds describing a binary; 0 means
	// DefaultDescribeTimeout.
	DescribeTimeout time.Duration
	// TailLines is how many stderr lines of a plugin process are kept for
	// errors; 0 means logging.DefaultTailLines.
	TailLines int
	// Env adds "KEY=value" entries to plugin processes' environment.
	Env []string
	// AutoMTLS turns on go-plugin's mutual TLS (see the package doc).
	AutoMTLS bool
	// CacheDir holds the description cache (cache.go); "" disables it.
	// DefaultCacheDir is the usual value.
	CacheDir string
	// Lock, when set, is the lock file in force: only binaries it lists,
	// with their recorded SHA-256, are started (lock.go).
	Lock *Lock
	// Reattach is the JSON line a plugin started with --debug prints
	// (the value of $TICKEMU_REATTACH_PLUGINS): the plugins it names are
	// used where they already run instead of being resolved (reattach.go).
	Reattach string
}

// Entry is one plugin the catalog can open, for `tickemu plugins`.
type Entry struct {
	Kind        sdk.Kind
	Name        string
	Version     string
	Description string
	// Source is SourceBuiltin (linked into this binary from tickemu), "linked-in
	// MODULE VERSION [=> REPLACEMENT]" (linked in from another module:
	// SourceLinkedIn), the path of the binary, or "reattached (pid N)".
	Source string
	// Module is set for a plugin linked in from a module other than tickemu
	// (a custom build's extra): where its code comes from (FactoryModule).
	Module *Module
	Schema sdk.Schema
	// Shadowed: another source provides the same kind and name and is the
	// one Open uses (resolve.go has the rule).
	Shadowed bool
	// Err is why a binary could not be described or cannot be run (Kind is
	// then empty and Name is the NAME of its file).
	Err error
}

// Catalog finds plugins and opens instances of them. Safe for concurrent use.
type Catalog struct {
	opts     Options
	log      zerolog.Logger
	builtins map[key]sdk.Factory
	binaries []binary // every tickemu-plugin-* file on the path, in search order
	reattach shim.Reattach
	cache    descCache

	mu        sync.Mutex
	described map[string]*description // by binary path
	warned    map[string]bool         // warnings given, by subject
	resolved  map[key]found           // lookup's successful answers: a comparison asks for the same names every run
}

// key identifies a plugin.
type key struct {
	kind sdk.Kind
	name string
}

func (k key) String() string { return string(k.kind) + "/" + k.name }

// description holds what a binary serves, once known.
type description struct {
	mu    sync.Mutex // held while the binary is being described
	done  bool
	descs []shim.Description
	err   error
}

// New returns a catalog of o.Builtins and the binaries on o.Path. It scans
// the path but starts no process; binaries are described on first need. It
// warns about every tickemu-plugin-* file that cannot be run.
func New(o Options) (*Catalog, error) {
	c := &Catalog{
		opts:      o,
		log:       o.Logger,
		builtins:  make(map[key]sdk.Factory),
		described: make(map[string]*description),
		warned:    make(map[string]bool),
		resolved:  make(map[key]found),
		cache:     descCache{dir: o.CacheDir},
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
	if o.Reattach != "" {
		r, err := shim.ParseReattach(o.Reattach)
		if err != nil {
			return nil, err
		}
		for _, k := range r.Keys() {
			kind, _, _ := strings.Cut(k, "/")
			if !isKind(sdk.Kind(kind)) {
				return nil, fmt.Errorf("reattach value: %w %q in %q (kinds: %s)", ErrUnknownKind, kind, k, kindList())
			}
		}
		c.reattach = r
	}
	c.binaries = scan(o.Path)
	for _, b := range c.binaries {
		if !b.runnable() {
			c.warnOnce("file "+b.path, func(e *zerolog.Event) {
				e.Str("path", b.path).Msgf("plugin binary %s %s; ignored", b.path, b.problem)
			})
		}
	}
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

// warnOnce logs a warning about subject the first time only: a comparison
// resolves the same names for every run.
func (c *Catalog) warnOnce(subject string, msg func(*zerolog.Event)) {
	c.mu.Lock()
	seen := c.warned[subject]
	c.warned[subject] = true
	c.mu.Unlock()
	if !seen {
		msg(c.log.Warn())
	}
}

func (c *Catalog) entry(path string) *description {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.described[path]
	if !ok {
		d = &description{}
		c.described[path] = d
	}
	return d
}

// describe returns what binary b serves: from memory, from the description
// cache, or by starting it once (then the answer is cached).
func (c *Catalog) describe(b binary) ([]shim.Description, error) {
	d := c.entry(b.path)
	d.mu.Lock()
	defer d.mu.Unlock()
	// A binary the lock refuses is listed as broken, as run refuses it.
	if !d.done && !c.lockRefuses(b, d) {
		if descs, ok := c.cache.get(b); ok {
			c.log.Debug().Str("path", b.path).Msg("plugin binary described from the cache")
			d.descs = descs
		} else {
			c.log.Debug().Str("path", b.path).Msg("describing plugin binary")
			d.descs, d.err = c.describeBinary(b)
			if d.err == nil {
				if err := c.cache.put(b, d.descs); err != nil {
					c.log.Debug().Err(err).Str("dir", c.cache.dir).Msg("plugin description cache not written")
				}
			}
		}
		d.done = true
	}
	if d.err != nil {
		c.warnOnce("broken "+b.path, func(e *zerolog.Event) {
			e.Str("path", b.path).Msgf("plugin binary %s does not answer as a tickemu plugin: %v", b.path, d.err)
		})
	}
	return d.descs, d.err
}

// lockRefuses checks b against the lock in force before anything is read
// of it, the description cache included: `tickemu plugins` listed a
// tampered binary from the cache as fine while run refused it. A refusal
// is recorded in d as b's error.
func (c *Catalog) lockRefuses(b binary, d *description) bool {
	if c.opts.Lock == nil {
		return false
	}
	if err := c.opts.Lock.verify(b.path); err != nil {
		d.err, d.done = err, true
		return true
	}
	return false
}

// known returns what b serves if that is known without starting it (from
// memory or the description cache).
func (c *Catalog) known(b binary) ([]shim.Description, bool) {
	d := c.entry(b.path)
	if !d.mu.TryLock() {
		return nil, false // being described right now
	}
	defer d.mu.Unlock()
	if !d.done && c.lockRefuses(b, d) {
		return nil, false
	}
	if !d.done {
		descs, ok := c.cache.get(b)
		if !ok {
			return nil, false
		}
		c.log.Debug().Str("path", b.path).Msg("plugin binary described from the cache")
		d.descs, d.done = descs, true // later calls need not read the file again
	}
	return d.descs, d.err == nil
}

// List returns every plugin: builtins and reattached plugins, then what each
// binary serves, ordered by kind, name and source (the one Open uses first,
// the shadowed ones after it in search order), then the binaries that could
// not be described or run (at the end). It describes every binary on the
// path (from the cache where it can), and marks winners with the same rule
// as Open (lookup).
func (c *Catalog) List() []Entry {
	var out, broken []Entry
	for k, f := range c.builtins {
		p := f.New()
		e := Entry{Kind: k.kind, Name: k.name, Version: p.Info().Version,
			Description: p.Info().Description, Source: linkedSource(f), Schema: p.Schema()}
		if m, ok := FactoryModule(f); ok {
			e.Module = &m
		}
		out = append(out, e)
	}
	rank := map[string]int{}
	for i, b := range c.binaries {
		rank[b.path] = i + 1
		if !b.runnable() {
			broken = append(broken, Entry{Name: b.name, Source: b.path, Err: fmt.Errorf("%s", b.problem)})
			continue
		}
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
	for _, k := range c.reattach.Keys() {
		kind, name, _ := strings.Cut(k, "/")
		f, err := c.lookup(sdk.Kind(kind), name)
		if err != nil {
			broken = append(broken, Entry{Name: name, Source: SourceReattached, Err: err})
			continue
		}
		out = append(out, Entry{Kind: f.desc.Info.Kind, Name: f.desc.Info.Name, Version: f.desc.Info.Version,
			Description: f.desc.Info.Description, Source: f.source(), Schema: f.desc.Schema})
	}
	winner := map[key]string{}
	for _, e := range out {
		k := key{e.Kind, e.Name}
		if _, ok := winner[k]; !ok {
			if f, err := c.lookup(e.Kind, e.Name); err == nil {
				winner[k] = f.source()
			}
		}
	}
	for i := range out {
		out[i].Shadowed = out[i].Source != winner[key{out[i].Kind, out[i].Name}]
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Shadowed != b.Shadowed {
			return !a.Shadowed
		}
		return rank[a.Source] < rank[b.Source]
	})
	return append(out, broken...)
}

// Names returns the names of the plugins of kind that the catalog knows
// without starting anything: builtins, reattached plugins, what binaries
// described earlier (or in the cache) serve, and the NAME of every binary
// not described yet (it is named after what it most likely serves). Sorted.
// The config layer uses it for per-plugin settings blocks.
func (c *Catalog) Names(kind sdk.Kind) []string {
	seen := map[string]bool{}
	for k := range c.builtins {
		if k.kind == kind {
			seen[k.name] = true
		}
	}
	for _, k := range c.reattach.Keys() {
		if kd, name, _ := strings.Cut(k, "/"); sdk.Kind(kd) == kind {
			seen[name] = true
		}
	}
	for _, b := range c.binaries {
		if !b.runnable() {
			continue
		}
		descs, ok := c.known(b)
		if !ok {
			seen[b.name] = true
			continue
		}
		for _, d := range descs {
			if d.Info.Kind == kind {
				seen[d.Info.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
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

// Source returns where kind/name resolves to (SourceBuiltin, a binary's path
// or "reattached (pid N)"): what Open would use.
func (c *Catalog) Source(kind sdk.Kind, name string) (string, error) {
	f, err := c.lookup(kind, name)
	if err != nil {
		return "", err
	}
	return f.source(), nil
}

// Open starts an instance of kind/name with isolation iso. Default runs a
// builtin in process and anything else in its own process.
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
		return nil, fmt.Errorf("%w: %s plugin %q is %s, which runs in its own process; only plugins linked into tickemu run in process "+
			"(drop isolation = \"inprocess\", or link it in with tickemu build --with)", ErrIsolation, kind, name, f.source())
	}
	if f.reattach != nil {
		return c.openReattached(k, *f.reattach)
	}
	var cmd *exec.Cmd
	verify := ""
	if f.builtin != nil {
		if c.opts.Self == "" {
			return nil, fmt.Errorf("%w: %s plugin %q: running a builtin in a process needs the tickemu executable", ErrIsolation, kind, name)
		}
		cmd = exec.Command(c.opts.Self, "plugin", "serve", string(kind), name)
	} else {
		cmd, verify = exec.Command(f.bin.path), f.bin.path
	}
	return c.openProcess(k, f.source(), cmd, verify)
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
	return &Instance{key: k, source: linkedSource(f), iso: InProcess, plugin: p, vetted: f.Vetted}, nil
}
