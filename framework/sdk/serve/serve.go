package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/pluginlog"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// parentPoll is how often a plugin process checks that its host is alive. A
// plugin orphaned by a host crash holds at most a socket and some memory, so
// a quarter second is prompt enough and costs nothing measurable.
const parentPoll = 250 * time.Millisecond

// Serve serves factories from a plugin binary and never returns. It exits
// with status 1 if the factories cannot be served (none, duplicates, an
// unknown kind) or the binary was not started by tickemu. Started as
// `BINARY --debug`, it serves on its own and prints the line that makes
// tickemu use it (see serveDebug).
func Serve(factories ...sdk.Factory) {
	serve(factories)
}

// One serves a single builtin; `tickemu plugin serve KIND NAME` calls it.
func One(f sdk.Factory) {
	serve([]sdk.Factory{f})
}

// Debug serves factories on their own until ^C, printing the reattach line,
// as Serve does for a binary started with --debug; `tickemu plugin serve
// KIND NAME --debug` calls it for a linked-in plugin. It never returns.
func Debug(factories ...sdk.Factory) {
	stderr := os.Stderr
	log := pluginlog.New(stderr, os.Getenv(pluginlog.LevelEnv))
	sets, err := shim.ServerPlugins(factories, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu plugin: %v\n", err)
		os.Exit(1)
	}
	serveDebug(factories, sets, log, os.Stdout)
	os.Exit(0)
}

func serve(fs []sdk.Factory) {
	// The real stderr, before plugin.Serve swaps os.Stderr for a pipe.
	stderr := os.Stderr
	log := pluginlog.New(stderr, os.Getenv(pluginlog.LevelEnv))
	sets, err := shim.ServerPlugins(fs, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu plugin: %v\n", err)
		os.Exit(1)
	}
	if debugRequested(os.Args[1:]) {
		Debug(fs...)
	}
	if os.Getenv(shim.Handshake.MagicCookieKey) != shim.Handshake.MagicCookieValue {
		// Run by hand: say what this is instead of go-plugin's generic text.
		fmt.Fprint(stderr, byHand(os.Args[0], fs))
		os.Exit(1)
	}
	{
		// Started by a host: leave when it does.
		go watchParent(os.Getppid(), os.Getppid, parentPoll, func(ppid int) {
			log.Warn().Int("host_pid", ppid).Msg("host process went away; plugin exiting")
			killOwnGroup()
			os.Exit(1)
		})
	}
	plugin.Serve(config(sets, log))
	os.Exit(0)
}

// config is the go-plugin ServeConfig of a plugin process.
func config(sets map[int]plugin.PluginSet, log zerolog.Logger) *plugin.ServeConfig {
	return &plugin.ServeConfig{
		HandshakeConfig:  shim.Handshake,
		VersionedPlugins: sets,
		GRPCServer:       shim.NewGRPCServer,
		Logger:           pluginlog.HCLog(log),
	}
}

// watchParent calls gone(ppid) once getppid stops returning ppid: the parent
// died and the process was re-parented (to init or a subreaper). Polling
// getppid works on Linux and macOS alike; PR_SET_PDEATHSIG would fire when the
// host's forking OS thread exits rather than the host (golang/go#27505).
func watchParent(ppid int, getppid func() int, every time.Duration, gone func(ppid int)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		if getppid() != ppid {
			gone(ppid)
			return
		}
	}
}

// byHand is what a plugin binary run by hand (not by tickemu, which sets the
// handshake cookie) prints: what it serves and how to use it.
func byHand(arg0 string, fs []sdk.Factory) string {
	var b strings.Builder
	name := filepath.Base(arg0)
	if !strings.HasPrefix(name, "tickemu-plugin-") && len(fs) == 1 {
		// `tickemu plugin serve KIND NAME`, tickemu re-executing itself.
		fmt.Fprintf(&b, "%s plugin serve %s %s is how tickemu runs its linked-in %s plugin %q in a process of its own; it is not run by hand.\n"+
			"Use isolation = \"process\" in the plugin's block (or tickemu run --isolation process), or add --debug to serve it for a debugger.\n",
			name, fs[0].Kind, fs[0].Name, fs[0].Kind, fs[0].Name)
		return b.String()
	}
	fmt.Fprintf(&b, "%s is a tickemu plugin binary; tickemu starts it, it is not run by hand. It serves:\n", name)
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s\n", f.Kind, f.Name)
	}
	dir := filepath.Dir(arg0)
	fmt.Fprintf(&b, "Use it:\n"+
		"  tickemu plugins --plugin-dir %[1]s\n      lists it with its settings\n"+
		"  tickemu run FILE.hcl --plugin-dir %[1]s\n      runs a config whose block names it (plugin = \"NAME\")\n"+
		"  tickemu plugin check %[2]s\n      runs the SDK's conformance suites on it\n"+
		"  %[2]s --debug\n      serves it for a debugger and prints the TICKEMU_REATTACH_PLUGINS line for tickemu\n"+
		"See docs/plugins.md and docs/protocol.md.\n", dir, arg0)
	return b.String()
}
