package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
)

// cmdValidate loads FILE as it is and with every variant (or the one given),
// decodes every block with its owner's schema and configures the plugins,
// without running.
func (a *App) cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs, true)
	if wantsHelp(fs, "tickemu validate FILE [flags]", "load every variant, decode every block with its owner's schema and configure the plugins, without running", args, stdout) {
		return 0
	}
	file, ok := parseFile(fs, args, stderr)
	if !ok {
		return 2
	}
	opts, log, ok := c.setup(stderr)
	if !ok {
		return 2
	}
	spec, ok := c.loadSpec(file, opts)
	if !ok {
		return 2
	}
	op, closeOp, err := a.newOpener(&c, log)
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 2 // a bad plugin flag, lock file or reattach value
	}
	defer closeOp()
	// Without --variant: the file as `tickemu run FILE` takes it (the
	// variables' defaults), then every variant; a default no variant
	// overrides must work too.
	variants := []string{opts.Variant}
	if opts.Variant == "" {
		variants = append(variants, spec.Variants()...)
	}
	// Every sweep point of every variant: a value may be wrong for one
	// setting only.
	sweeps := spec.Sweeps()
	points := config.Points(sweeps)
	for _, v := range variants {
		for p := range points {
			o := opts
			o.Variant = v
			if len(sweeps) > 0 {
				o.Point = config.PointIndex(sweeps, p)
			}
			s, ok := c.loadSpec(file, o)
			if !ok {
				return 2
			}
			if err := experiment.Validate(s, c.runOptions(op, log)); err != nil {
				return reportError(stderr, err)
			}
		}
		name := v
		if name == "" {
			name = "(no variant)"
		}
		if len(sweeps) > 0 {
			name += fmt.Sprintf(" at %d sweep points", len(points))
		}
		fmt.Fprintf(stdout, "%s: %s ok\n", file, name)
	}
	return 0
}
