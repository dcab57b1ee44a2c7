package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/serve"
)

// cmdPlugins lists the builtin plugins, the plugins a custom build linked in
// (with their module and its version), and the tickemu-plugin-NAME binaries
// found on the plugin path, with versions and schemas.
func (a *App) cmdPlugins(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plugins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, false)
	if _, err := parseInterspersed(fs, args); err != nil {
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	cat, err := a.catalog(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	for _, e := range cat.List() {
		if e.Err != nil {
			fmt.Fprintf(stdout, "? %s (%s): %v\n", e.Name, e.Source, e.Err)
			continue
		}
		src := e.Source
		if e.Module != nil {
			src = "linked-in " + e.Module.String()
		}
		if e.Shadowed {
			src += ", shadowed"
		}
		writePlugin(stdout, sdk.Info{Kind: e.Kind, Name: e.Name, Version: e.Version, Description: e.Description}, e.Schema, src)
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
		def := a.Default
		if a.Required {
			def = "(required)"
		}
		fmt.Fprintf(w, "  %-22s %-9s default %-14s%s\n", a.Name, a.Type, def, extra)
	}
}

// cmdPlugin is the hidden `tickemu plugin serve KIND NAME`: tickemu re-executes
// itself this way to run a linked-in plugin (builtin or extra) out of process.
func (a *App) cmdPlugin(args []string, stdout, stderr io.Writer) int {
	if len(args) != 3 || args[0] != "serve" {
		fmt.Fprintln(stderr, "usage: tickemu plugin serve KIND NAME (started by tickemu itself)")
		return 2
	}
	for _, f := range a.factories {
		if string(f.Kind) == args[1] && f.Name == args[2] {
			serve.One(f) // never returns
			return 0
		}
	}
	fmt.Fprintf(stderr, "tickemu plugin: no linked-in %s plugin %q\n", args[1], args[2])
	return 2
}
