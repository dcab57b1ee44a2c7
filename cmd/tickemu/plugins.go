package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tickemu/tickemu/framework/sdk"
)

// cmdPlugins lists the builtin plugins with their versions and schemas.
func cmdPlugins(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plugins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, f := range builtins {
		p := f.New()
		writePlugin(stdout, p.Info(), p.Schema(), "builtin")
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

// cmdPlugin is the hidden `tickemu plugin serve KIND NAME`.
func cmdPlugin(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "tickemu plugin: this command is started by tickemu itself")
	return 2
}
