package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/logging"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/internal/suggest"
)

// multiFlag collects repeated --var k=v flags.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// common holds the flags every scenario command takes.
type common struct {
	vars    multiFlag
	sweeps  multiFlag
	variant string
	// kernelVersion is --kernel-version: the release whose settings every
	// versioned attribute the file leaves unset takes.
	kernelVersion string
	seed          string
	isolation     string
	logFormat     string
	logLevel      string
	pluginDir     string
	// Plugin resolution and debugging (framework/loader): a lock file, a
	// reattach value, extra plugin environment.
	pluginLock     string
	pluginReattach string
	pluginEnv      multiFlag
	// callTimeout is --plugin-call-timeout: 0 turns the deadline off.
	callTimeout time.Duration
	// pluginStats is --plugin-stats (run and compare: registerPluginStats).
	pluginStats bool
	// checkBuiltins is --check-builtins (experiment.Options.CheckBuiltins).
	checkBuiltins bool
	// diags prints the command's diagnostics, each once (set by setup).
	diags *diagPrinter
}

func (c *common) register(fs *flag.FlagSet, withVariant bool) {
	fs.Var(&c.vars, "var", "set a variable: NAME=VALUE (repeatable)")
	fs.Var(&c.sweeps, "sweep", "sweep a setting: NAME=V1,V2,... (repeatable; every combination runs; docs/config.md names the settings)")
	if withVariant {
		fs.StringVar(&c.variant, "variant", "", "apply the variant block NAME")
		fs.StringVar(&c.seed, "seed", "", "override run.seed")
	}
	fs.StringVar(&c.kernelVersion, "kernel-version", "", "kernel release (\"6.13\") whose strategy settings apply to every versioned attribute the file leaves unset; overrides kernel.version (docs/kernel-changes.md)")
	fs.BoolVar(&c.checkBuiltins, "check-builtins", false, "check every answer of the builtin plugins against the plugin contract, as every other plugin's are checked (for whoever edits a builtin; --plugin-stats checks them too); the results are the same")
	fs.StringVar(&c.isolation, "isolation", "", "override every plugin block's isolation: inprocess or process (default: each block's own; without one, linked-in plugins run in process and binaries in their own process)")
	c.registerPluginFlags(fs)
}

// registerPluginFlags registers the logging and plugin-finding flags, the
// ones a command that runs no scenario (plugins) takes too.
func (c *common) registerPluginFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.logFormat, "log-format", "auto", "log format: auto, console or json")
	fs.StringVar(&c.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	fs.StringVar(&c.pluginDir, "plugin-dir", "", "directories searched for tickemu-plugin-NAME binaries, before $TICKEMU_PLUGIN_PATH (./plugins only if named)")
	fs.StringVar(&c.pluginLock, "plugin-lock", "", "lock file of trusted plugin binaries (default $TICKEMU_PLUGIN_LOCK, else ./"+loader.DefaultLockFile+" if it exists)")
	fs.StringVar(&c.pluginReattach, "plugin-reattach", "", "use plugins already running with --debug: the line they print (default $"+loader.ReattachEnv+")")
	fs.Var(&c.pluginEnv, "plugin-env", "add KEY=VALUE to plugin processes' environment (repeatable)")
	fs.DurationVar(&c.callTimeout, "plugin-call-timeout", loader.DefaultCallTimeout,
		"deadline of each call to a plugin process, its start and describe included (0: none, for debugging)")
}

// registerPluginStats registers --plugin-stats, for the commands that
// print a run's or a comparison's results (run, compare).
func (c *common) registerPluginStats(fs *flag.FlagSet) {
	fs.BoolVar(&c.pluginStats, "plugin-stats", false, "count every plugin's calls, transport round trips and wall time per call, and print them after the results (JSON: plugin_stats, and plugin_wall for the times, which differ from run to run)")
}

// pluginCallTimeout is the loader's CallTimeout for --plugin-call-timeout.
func (c *common) pluginCallTimeout() time.Duration {
	if c.callTimeout == 0 {
		return loader.NoCallTimeout
	}
	return c.callTimeout
}

// lockFile returns the lock file to use and whether it must exist (named by
// the flag or the environment) rather than being the optional default.
func (c *common) lockFile() (string, bool) {
	if c.pluginLock != "" {
		return c.pluginLock, true
	}
	if v := os.Getenv(loader.LockEnv); v != "" {
		return v, true
	}
	return loader.DefaultLockFile, false
}

// pluginOptions returns the loader options the plugin flags set; withLock
// false skips the lock file (tickemu plugins lock rewrites it).
func (c *common) pluginOptions(withLock bool) (loader.Options, error) {
	o := loader.Options{
		Path:     loader.SearchPath(c.pluginDir, os.Getenv),
		CacheDir: loader.DefaultCacheDir(),
		Reattach: c.pluginReattach,
		// Describe and every call to a plugin process get the deadline.
		CallTimeout: c.pluginCallTimeout(),
	}
	if o.Reattach == "" {
		o.Reattach = os.Getenv(loader.ReattachEnv)
	}
	for _, kv := range c.pluginEnv {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return o, fmt.Errorf("--plugin-env %q: want KEY=VALUE", kv)
		}
		o.Env = append(o.Env, kv)
	}
	if withLock {
		file, must := c.lockFile()
		l, err := loader.ReadLock(file)
		switch {
		case err == nil:
			o.Lock = l
		case must || !errors.Is(err, os.ErrNotExist):
			return o, fmt.Errorf("--plugin-lock: %w", err)
		}
	}
	return o, nil
}

// parseInterspersed parses flags that may come before or after positional
// arguments (tickemu run FILE --variant x).
//
// A bad flag gets one line on the flag set's output, with the nearest flag
// name and where the list is, not the whole list: with twenty-odd flags the
// mistake would scroll away.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseFlags is fs.Parse with a bad flag reported by writeFlagError on the
// flag set's output.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer fs.SetOutput(out)
	err := fs.Parse(args)
	if err != nil {
		writeFlagError(out, fs, err)
	}
	return err
}

// writeFlagError prints a flag parse error as one line: what is wrong, the
// nearest flag name for an unknown one, and the command's --help.
func writeFlagError(w io.Writer, fs *flag.FlagSet, err error) {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = fmt.Sprintf("unknown flag --%s", name)
		if s := suggest.Nearest(name, names); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	fmt.Fprintf(w, "tickemu %s: %s; tickemu %s --help lists its flags\n", fs.Name(), msg, fs.Name())
}

// parseFile parses a command's flags around its one FILE argument; ok is
// false (after a usage message) when that is not what it got.
func parseFile(fs *flag.FlagSet, args []string, stderr io.Writer) (file string, ok bool) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", false
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "usage: tickemu %s FILE [flags]\n", fs.Name())
		return "", false
	}
	return pos[0], true
}

func (c *common) options() (config.Options, error) {
	o := config.Options{Vars: map[string]string{}, Variant: c.variant, KernelVersion: c.kernelVersion}
	for _, v := range c.vars {
		name, val, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return o, fmt.Errorf("--var %q: want NAME=VALUE", v)
		}
		o.Vars[name] = val
	}
	sweeps, diags := config.ParseSweepFlags(c.sweeps)
	if diags.HasErrors() {
		var b strings.Builder
		config.WriteDiagnostics(&b, diags, nil, false)
		return o, errors.New(strings.TrimSpace(b.String()))
	}
	o.Sweeps = sweeps
	if c.seed != "" {
		s, err := strconv.ParseUint(c.seed, 10, 64)
		if err != nil {
			return o, fmt.Errorf("--seed %q: want a non-negative integer", c.seed)
		}
		o.Seed = &s
	}
	if c.callTimeout < 0 {
		return o, fmt.Errorf("--plugin-call-timeout %v: want a duration >= 0 (0: no deadline)", c.callTimeout)
	}
	switch c.isolation {
	case "", config.IsolationInProcess, config.IsolationProcess:
	default:
		return o, fmt.Errorf("--isolation %q: want %s or %s", c.isolation, config.IsolationInProcess, config.IsolationProcess)
	}
	return o, nil
}

func (c *common) logger(stderr io.Writer) (zerolog.Logger, error) {
	var opts []logging.Option
	if os.Getenv("NO_COLOR") != "" {
		opts = append(opts, logging.WithoutColor())
	}
	return logging.New(stderr, c.logFormat, c.logLevel, opts...)
}

// setup turns the common flags into config options and a logger, printing
// what is wrong with them; ok is false on a usage error.
func (c *common) setup(stderr io.Writer) (config.Options, zerolog.Logger, bool) {
	c.diags = newDiagPrinter(stderr)
	opts, err := c.options()
	if err == nil {
		var log zerolog.Logger
		if log, err = c.logger(stderr); err == nil {
			return opts, log, true
		}
	}
	fmt.Fprintf(stderr, "tickemu: %v\n", err)
	return opts, zerolog.Nop(), false
}

// loadSpec loads FILE, printing its diagnostics (each once a command).
func (c *common) loadSpec(file string, o config.Options) (*config.Spec, bool) {
	spec, diags := config.Load(file, o)
	c.printDiags(spec, diags)
	return spec, !diags.HasErrors()
}

// loadSpecBytes is loadSpec for a file already read.
func (c *common) loadSpecBytes(file string, src []byte, o config.Options) (*config.Spec, bool) {
	spec, diags := config.LoadBytes(file, src, o)
	c.printDiags(spec, diags)
	return spec, !diags.HasErrors()
}

func (c *common) printDiags(spec *config.Spec, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	var files map[string]*hcl.File
	if spec != nil {
		files = spec.Files()
	}
	c.diags.write(diags, files)
}

// loader returns the loader of the runs of a comparison, a sweep or a
// bisection: file (read into src) with opts as set changes them. Its
// warnings are printed (each once); its errors are the run's.
func (c *common) loader(file string, src []byte, opts config.Options) func(set func(*config.Options)) (*config.Spec, error) {
	return func(set func(*config.Options)) (*config.Spec, error) {
		o := opts
		set(&o)
		s, diags := config.LoadBytes(file, src, o)
		if diags.HasErrors() {
			return nil, &experiment.DiagError{Diags: diags, Files: s.Files()}
		}
		c.printDiags(s, diags)
		return s, nil
	}
}

// runOptions are the experiment options the common flags set, with the
// plugins opened by op: a configuration's warnings are printed, each once.
func (c *common) runOptions(op experiment.Opener, log zerolog.Logger) experiment.Options {
	return experiment.Options{Opener: op, Isolation: c.isolation, CallTimeout: c.pluginCallTimeout(), Log: log, OnWarnings: c.diags.write,
		PluginStats: c.pluginStats, CheckBuiltins: c.checkBuiltins}
}

// reportError prints a run error; config diagnostics get their source snippets.
func reportError(stderr io.Writer, err error) int {
	var de *experiment.DiagError
	if errors.As(err, &de) {
		config.WriteDiagnostics(stderr, de.Diags, de.Files, false)
		return 2
	}
	var te *sdk.TransportError
	if errors.As(err, &te) {
		fmt.Fprintf(stderr, "tickemu: run aborted: %v\n", te)
		if !writeStack(stderr, te.Stack) {
			writeStderrTail(stderr, te.Stderr)
		}
		return 1
	}
	var ce *sdk.ContractError
	if errors.As(err, &ce) {
		fmt.Fprintf(stderr, "tickemu: run aborted: %v\n", ce)
		return 1
	}
	fmt.Fprintf(stderr, "tickemu: %v\n", err)
	return 1
}

// stderrTailLines is how many of a failed plugin's last stderr lines an
// error shows.
const stderrTailLines = 5

// writeStderrTail prints the last stderrTailLines non-empty lines of a failed
// plugin's stderr, quoted so that control characters cannot forge output.
func writeStderrTail(w io.Writer, tail []string) {
	var lines []string
	for _, l := range tail {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if n := len(lines); n > stderrTailLines {
		lines = lines[n-stderrTailLines:]
	}
	for _, l := range lines {
		q := strconv.QuoteToGraphic(l)
		fmt.Fprintf(w, "  plugin stderr: %s\n", q[1:len(q)-1])
	}
}

// writeStack prints a plugin's panic stack, indented, one frame element a
// line, quoted like the stderr tail; it reports whether there was one.
func writeStack(w io.Writer, stack []string) bool {
	if len(stack) == 0 {
		return false
	}
	fmt.Fprintln(w, "  plugin stack:")
	for _, l := range stack {
		q := strconv.QuoteToGraphic(strings.ReplaceAll(l, "\t", "    "))
		fmt.Fprintf(w, "    %s\n", q[1:len(q)-1])
	}
	return true
}

func protocolVersion() int { return sdk.ProtocolVersion }
