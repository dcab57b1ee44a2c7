package cli

import (
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"

	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/serve"
)

// cmdPlugins lists the builtin plugins, the plugins a custom build linked in
// (with their module and its version), and the tickemu-plugin-NAME binaries
// found on the plugin path, with versions and schemas, marking the ones the
// resolution rule passes over as shadowed. `tickemu plugins lock` writes the
// lock file instead.
func (a *App) cmdPlugins(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plugins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.registerPluginFlags(fs)
	format := fs.String("format", "text", "output format: text or json (every attribute with its type, default, allowed values and doc)")
	if wantsHelp(fs, "tickemu plugins [lock] [flags]", "list the builtin, linked-in and discovered plugins with their config schemas; `lock` writes the lock file", args, stdout) {
		return 0
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	lock := false
	switch {
	case len(pos) == 1 && pos[0] == "lock":
		lock = true
	case len(pos) > 0:
		fmt.Fprintln(stderr, "usage: tickemu plugins [lock] [flags]")
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	cat, err := a.catalogWith(&c, log, !lock)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer loader.CleanupClients()
	if lock {
		return writeLock(cat, &c, stdout, stderr)
	}
	switch *format {
	case "json":
		return writePluginsJSON(stdout, stderr, cat.List())
	case "text":
	default:
		fmt.Fprintf(stderr, "tickemu: --format %q: want text or json\n", *format)
		return 2
	}
	for _, e := range cat.List() {
		if e.Err != nil {
			fmt.Fprintf(stdout, "? %s (%s): %v\n", e.Name, e.Source, e.Err)
			continue
		}
		src := e.Source
		if e.Shadowed {
			src += ", shadowed"
		}
		writePlugin(stdout, sdk.Info{Kind: e.Kind, Name: e.Name, Version: e.Version, Description: e.Description}, e.Schema, src)
	}
	return 0
}

// writeLock records the SHA-256 of every plugin binary on the path that
// answers as a plugin; the others are named and left out (so a run with the
// lock refuses them).
func writeLock(cat *loader.Catalog, c *common, stdout, stderr io.Writer) int {
	file, _ := c.lockFile()
	l, problems := cat.NewLock()
	for _, err := range problems {
		fmt.Fprintf(stderr, "tickemu: not locked: %v\n", err)
	}
	if err := l.Write(file); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d plugin binaries locked\n", file, len(l.Binaries))
	for _, b := range l.Binaries {
		fmt.Fprintf(stdout, "  %s  %s\n", b.SHA256, b.Path)
	}
	return 0
}

func writePlugin(w io.Writer, info sdk.Info, s sdk.Schema, source string) {
	fmt.Fprintf(w, "%s %s %s (%s)\n", info.Kind, info.Name, info.Version, source)
	if info.Description != "" {
		fmt.Fprintf(w, "  %s\n", info.Description)
	}
	for _, a := range s.Attributes {
		extra := ""
		if len(a.OneOf) > 0 {
			extra = " one of " + strings.Join(a.OneOf, "|")
		}
		switch {
		case a.Min != "" && a.Max != "":
			extra += " from " + a.Min + " to " + a.Max
		case a.Max != "":
			extra += " at most " + a.Max
		case a.Min != "":
			extra += " at least " + a.Min
		}
		def := a.Default
		if a.Required {
			def = "(required)"
		}
		if len(a.Eras) > 0 {
			extra += "; by kernel release: " + erasText(a.Eras)
		}
		fmt.Fprintf(w, "  %-22s %-9s default %-14s%s\n", a.Name, a.Type, def, strings.TrimSpace(extra))
		if a.Doc != "" {
			fmt.Fprintf(w, "  %-22s %s\n", "", a.Doc)
		}
	}
}

// erasText lists an attribute's value per release, "3.10 tval, 5.16 cval".
// Where a release has several eras (a change and its fix queued for the same
// merge window) the release's value is the last one; the earlier ones are
// named as what it replaced in that window.
func erasText(eras []sdk.Era) string {
	var es []string
	for i := 0; i < len(eras); {
		j := i
		for j+1 < len(eras) && eras[j+1].Since == eras[i].Since {
			j++
		}
		t := eras[j].Since + " " + eras[j].Value
		if j > i {
			var before []string
			for _, e := range eras[i:j] {
				before = append(before, e.Value)
			}
			t += " (replacing " + strings.Join(before, ", ") + " in the same merge window)"
		}
		es = append(es, t)
		i = j + 1
	}
	return strings.Join(es, ", ")
}

// cmdPlugin is the hidden `tickemu plugin serve KIND NAME`: tickemu re-executes
// itself this way to run a linked-in plugin (builtin or extra) out of process.
// With --debug it serves a linked-in plugin on its own, to be reattached to
// (docs/plugins.md, "Debugging a plugin").
func (a *App) cmdPlugin(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check" {
		return a.cmdPluginCheck(args[1:], stderr)
	}
	debug := len(args) == 4 && args[3] == serve.DebugFlag
	if (len(args) != 3 && !debug) || args[0] != "serve" {
		fmt.Fprintln(stderr, "usage: tickemu plugin serve KIND NAME [--debug] (started by tickemu itself, or by hand with --debug)\n       tickemu plugin check BINARY (the conformance suite of every plugin BINARY serves)")
		return 2
	}
	for _, f := range a.factories {
		if string(f.Kind) == args[1] && f.Name == args[2] {
			if debug {
				// ^C ends the debug server cleanly (exit 0), instead of
				// Main's handler for runs.
				signal.Reset(exitSignals...)
				serve.Debug(f) // never returns
			}
			serve.One(f) // never returns
			return 0
		}
	}
	fmt.Fprintf(stderr, "tickemu plugin: no linked-in %s plugin %q\n", args[1], args[2])
	return 2
}
