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
	f, status, ok := parseCheckFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	_, log, ok := f.c.setup(stderr)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(&f.c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2
	}
	defer closeOp()
	opts := sidebyside.Options{
		Scenario:     bundlescenario.Options{Profile: f.profile, Seed: f.seed},
		Experiment:   experiment.Options{Opener: op, Log: log},
		NoBackground: f.noBackground,
	}
	for i, path := range f.bundles {
		if f.printScenario {
			if err := printCheckScenario(path, opts, stdout); err != nil {
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
		if err := f.write(stdout, t, i); err != nil {
			return 1
		}
	}
	return 0
}

// checkFlags are check's flags and its bundles.
type checkFlags struct {
	c             common
	profile       string // absolute, or ""
	format        string
	seed          uint64
	printScenario bool
	noBackground  bool
	bundles       []string
}

// parseCheckFlags parses check's command line and checks its flags; ok is
// false with the status to exit with (0 after --help).
func parseCheckFlags(args []string, stdout, stderr io.Writer) (f *checkFlags, status int, ok bool) {
	f = &checkFlags{}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.c.registerPluginFlags(fs)
	fs.StringVar(&f.profile, "profile", "", "machine profile (tickemu calibrate's output) the model runs with: machine { profile = FILE }")
	fs.StringVar(&f.format, "format", "text", "output format: text or json (one JSON object per bundle)")
	fs.Uint64Var(&f.seed, "seed", 1, "the model run's seed")
	fs.BoolVar(&f.printScenario, "scenario", false, "print each bundle's translated scenario (HCL) instead of running it")
	fs.BoolVar(&f.noBackground, "no-background", false, "run the command alone: without the capture's background (its timers and tasks outside the command's process tree) replayed beside it")
	if wantsHelp(fs, "tickemu check BUNDLE... [flags]", "run each capture bundle's command on the model, with the capture's background replayed beside it, and print model against real, row by row with tolerances", args, stdout) {
		return nil, 0, false
	}
	bundles, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, 2, false
	}
	if len(bundles) == 0 {
		fmt.Fprintln(stderr, "usage: tickemu check BUNDLE... [--profile FILE] [--format text|json] [--seed N]")
		return nil, 2, false
	}
	f.bundles = bundles
	if f.format != "text" && f.format != "json" {
		fmt.Fprintf(stderr, "tickemu: check: --format %s: text or json\n", strconv.Quote(f.format))
		return nil, 2, false
	}
	if f.profile != "" {
		abs, err := filepath.Abs(f.profile)
		if err != nil {
			fmt.Fprintf(stderr, "tickemu: check: %v\n", err)
			return nil, 2, false
		}
		f.profile = abs
	}
	return f, 0, true
}

// printCheckScenario prints the scenario (HCL) the bundle at path
// translates to.
func printCheckScenario(path string, opts sidebyside.Options, stdout io.Writer) error {
	p, err := sidebyside.Prepare(path, opts)
	if err != nil {
		return err
	}
	_, err = stdout.Write(p.Scenario.HCL)
	return err
}

// write prints the i-th bundle's table in --format, text tables apart by a
// blank line.
func (f *checkFlags) write(stdout io.Writer, t *sidebyside.Table, i int) error {
	if f.format == "json" {
		return t.WriteJSON(stdout)
	}
	if i > 0 {
		fmt.Fprintln(stdout)
	}
	return t.WriteText(stdout)
}
