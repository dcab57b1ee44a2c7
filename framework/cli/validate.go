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
	sweeps := spec.Sweeps()
	for _, v := range validateVariants(opts.Variant, spec) {
		o := opts
		o.Variant = v
		if status := c.validatePoints(file, o, sweeps, c.runOptions(op, log), stderr); status != 0 {
			return status
		}
		name := v
		if name == "" {
			name = "(no variant)"
		}
		if len(sweeps) > 0 {
			name += fmt.Sprintf(" at %d sweep points", len(config.Points(sweeps)))
		}
		fmt.Fprintf(stdout, "%s: %s ok\n", file, name)
	}
	return 0
}

// validateVariants are the variants validate loads: the one --variant
// names, or else the file as `tickemu run FILE` takes it (the variables'
// defaults: a default no variant overrides must work too), then every
// variant.
func validateVariants(variant string, spec *config.Spec) []string {
	variants := []string{variant}
	if variant == "" {
		variants = append(variants, spec.Variants()...)
	}
	return variants
}

// validatePoints loads file with opts at every sweep point (a value may be
// wrong for one setting only) and configures its plugins; it returns the
// status to exit with, 0 when every point is valid.
func (c *common) validatePoints(file string, opts config.Options, sweeps []config.Sweep, run experiment.Options, stderr io.Writer) int {
	for p := range config.Points(sweeps) {
		o := opts
		if len(sweeps) > 0 {
			o.Point = config.PointIndex(sweeps, p)
		}
		s, ok := c.loadSpec(file, o)
		if !ok {
			return 2
		}
		if err := experiment.Validate(s, run); err != nil {
			return reportError(stderr, err)
		}
	}
	return 0
}
