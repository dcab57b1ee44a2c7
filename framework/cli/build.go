package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/tickemu/tickemu/framework/custombuild"
)

// withFlag collects repeated --with MODULE[@VERSION][=DIR].
type withFlag []custombuild.Plugin

func (w *withFlag) String() string {
	s := make([]string, len(*w))
	for i, p := range *w {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

func (w *withFlag) Set(v string) error {
	p, err := custombuild.ParseWith(v)
	if err != nil {
		return err
	}
	*w = append(*w, p)
	return nil
}

// cmdBuild builds a tickemu with extra plugin modules linked in:
//
//	tickemu build --with MODULE[@VERSION][=DIR] ... [-o FILE] [--tickemu VERSION|DIR] [--keep]
//
// Each MODULE's root package exports Factories() []sdk.Factory (the one
// registration way, docs/plugins.md). DIR replaces the module with a local
// directory; tickemu itself comes from the checkout this binary was built in,
// if any, so a build from checkouts needs no network.
func (a *App) cmdBuild(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var with withFlag
	fs.Var(&with, "with", "link the plugin module MODULE[@VERSION][=DIR] (repeatable)")
	out := fs.String("o", "tickemu", "write the binary to FILE")
	tickemu := fs.String("tickemu", "", "the tickemu to link: VERSION, or DIR of a checkout (default: the one this binary comes from)")
	keep := fs.Bool("keep", false, "keep the generated main module and print its directory")
	if wantsHelp(fs, "tickemu build --with MODULE[@VERSION][=DIR] ... [-o FILE] [--tickemu VERSION|DIR] [--keep]",
		"build a tickemu with plugin modules linked in: each MODULE's root package exports Factories() []sdk.Factory (docs/plugins.md)", args, stdout) {
		return 0
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "tickemu build: unexpected argument %q (plugins go in --with)\n", pos[0])
		return 2
	}
	if len(with) == 0 {
		fmt.Fprintln(stderr, "usage: tickemu build --with MODULE[@VERSION][=DIR] ... [-o FILE]")
		return 2
	}
	o := custombuild.Options{Plugins: with, Output: *out, Log: stderr, Keep: *keep}
	if *tickemu != "" {
		if o.Tickemu, err = custombuild.ParseTickemu(*tickemu); err != nil {
			fmt.Fprintf(stderr, "tickemu build: %v\n", err)
			return 2
		}
	} else if t, ok := custombuild.ThisTickemu(); ok {
		o.Tickemu = t
	} else {
		fmt.Fprintln(stderr, "tickemu build: cannot tell which tickemu this binary was built from: give --tickemu VERSION or --tickemu DIR")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := custombuild.Build(ctx, o)
	if *keep && res.Dir != "" {
		fmt.Fprintf(stderr, "tickemu build: generated module kept in %s\n", res.Dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu build: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "built %s: %s with\n", *out, o.Tickemu)
	for _, p := range with {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	fmt.Fprintf(stdout, `Its plugins run in process by default; isolation = "process" in a block
(or --isolation process) runs them in their own processes.
  %[1]s plugins            lists them as linked-in, with their module versions
  %[1]s run FILE           runs a scenario with them
`, *out)
	return 0
}
