package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/tickemu/tickemu/framework/bundlescenario"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sidebyside"
)

// cmdCheck holds the model against real kernel captures:
//
//	tickemu check BUNDLE... [--profile FILE] [--format text|json] [--seed N] [--scenario] [--no-background]
//
// For each capture bundle (tickemu capture) it runs the bundle's own
// command as a scenario on the bundle's machine (framework/bundlescenario),
// with the capture's background (everything outside the command's process
// tree) replayed beside it unless --no-background, and prints model
// against real, one table per bundle, each row with its tolerance class
// and a within/outside mark.
// Exit status 0 when every bundle was checked (whatever the marks), 1 when
// one could not be (unreadable, a flag the model cannot follow, a failed
// run: the message says which), 2 for bad usage.
func (a *App) cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.registerPluginFlags(fs)
	profile := fs.String("profile", "", "machine profile (tickemu calibrate's output) the model runs with: machine { profile = FILE }")
	format := fs.String("format", "text", "output format: text or json (one JSON object per bundle)")
	seed := fs.Uint64("seed", 1, "the model run's seed")
	printScenario := fs.Bool("scenario", false, "print each bundle's translated scenario (HCL) instead of running it")
	noBackground := fs.Bool("no-background", false, "run the command alone: without the capture's background (its timers and tasks outside the command's process tree) replayed beside it")
	if wantsHelp(fs, "tickemu check BUNDLE... [flags]", "run each capture bundle's command on the model, with the capture's background replayed beside it, and print model against real, row by row with tolerances", args, stdout) {
		return 0
	}
	bundles, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(bundles) == 0 {
		fmt.Fprintln(stderr, "usage: tickemu check BUNDLE... [--profile FILE] [--format text|json] [--seed N]")
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "tickemu: check: --format %s: text or json\n", strconv.Quote(*format))
		return 2
	}
	if *profile != "" {
		abs, err := filepath.Abs(*profile)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: check: %v\n", err)
			return 2
		}
		*profile = abs
	}
	_, log, ok := c.setup(stderr)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()
	for i, path := range bundles {
		opts := sidebyside.Options{
			Scenario:     bundlescenario.Options{Profile: *profile, Seed: *seed},
			Experiment:   experiment.Options{Opener: op, Log: log},
			NoBackground: *noBackground,
		}
		if *printScenario {
			p, err := sidebyside.Prepare(path, opts)
			if err == nil {
				_, err = stdout.Write(p.Scenario.HCL)
			}
			if err != nil {
				fmt.Fprintf(stderr, "tickemu: check: %s: %v\n", path, err)
				return 1
			}
			continue
		}
		t, err := sidebyside.Check(path, opts)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: check: %v\n", err)
			return 1
		}
		if i > 0 && *format == "text" {
			fmt.Fprintln(stdout)
		}
		if *format == "json" {
			err = t.WriteJSON(stdout)
		} else {
			err = t.WriteText(stdout)
		}
		if err != nil {
			return 1
		}
	}
	return 0
}
