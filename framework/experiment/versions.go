package experiment

import (
	"errors"
	"fmt"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
)

// addHost adds the host's versioned settings: the kernel block and the
// slots whose default plugin follows the release (the governor's).
func addHost(t *kernelversion.Table) error {
	errs := []error{t.Add("kernel", "", kernel.KernelSchema())}
	for _, s := range config.DefaultPluginSlots() {
		if len(s.DefaultEras) > 0 {
			errs = append(errs, t.Add(string(s.Kind), "", config.SlotSchema(s)))
		}
	}
	return errors.Join(errs...)
}

// TableOf is the version table of every plugin the factories make and of
// the host: what docs/kernel-changes.md lists for the builtins.
func TableOf(fs []sdk.Factory) (*kernelversion.Table, error) {
	t := &kernelversion.Table{}
	var errs []error
	for _, f := range fs {
		p := f.New()
		errs = append(errs, t.Add(string(f.Kind), f.Name, p.Schema()))
	}
	errs = append(errs, addHost(t))
	return t, errors.Join(errs...)
}

// ScenarioTable is the version table of the plugins spec's blocks select
// (described through o, so a plugin in its own process takes part) and of
// the host: the changes that can matter to that scenario.
func ScenarioTable(spec *config.Spec, o Opener) (*kernelversion.Table, error) {
	t := &kernelversion.Table{}
	var errs []error
	for _, pb := range spec.Plugins {
		_, schema, err := o.Describe(pb.Kind, pb.Plugin)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pb.What(), err))
			continue
		}
		errs = append(errs, t.Add(string(pb.Kind), pb.Plugin, schema))
	}
	errs = append(errs, addHost(t))
	return t, errors.Join(errs...)
}

// slotOverrides is the plugin choice of block pb when the file sets it
// against the version (the governor's: the idle tick-retain rule).
func slotOverrides(spec *config.Spec, pb config.PluginBlock) []config.Override {
	var out []config.Override
	for _, s := range config.DefaultPluginSlots() {
		if s.Kind != pb.Kind || s.Role != pb.Role || len(s.DefaultEras) == 0 {
			continue
		}
		a := config.SlotSchema(s).Attributes[0]
		k := kernelversion.Key{Kind: string(s.Kind), Attr: a.Name}
		if v, ok := spec.Preset(k, a); ok && v != pb.Plugin {
			out = append(out, config.Override{Key: k, Setting: k.String(), Value: pb.Plugin, Version: v})
		}
	}
	return out
}

// Overrides lists the versioned settings spec's file sets itself, against
// its kernel version or presets: each plugin block's attributes (decoded
// with the schema o describes, no plugin started), the kernel block's, and
// a slot's plugin choice when it follows the release.
func Overrides(spec *config.Spec, o Opener) ([]config.Override, error) {
	var out []config.Override
	for _, pb := range spec.Plugins {
		out = append(out, slotOverrides(spec, pb)...)
		_, schema, err := o.Describe(pb.Kind, pb.Plugin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pb.What(), err)
		}
		written := pb
		pb, d := pluginBody(spec, pb, Options{Opener: o})
		cfg, d2 := spec.DecodePlugin(pb, schema)
		d2 = explainMissingPlugin(written, Options{Opener: o}, d2)
		if d = append(d, d2...); d.HasErrors() {
			return nil, &DiagError{Diags: d, Files: spec.Files()}
		}
		out = append(out, spec.Overrides(string(pb.Kind), pb.Plugin, schema, cfg)...)
	}
	ks := kernel.KernelSchema()
	kcfg, d := spec.DecodeKernel(ks)
	if d.HasErrors() {
		return nil, &DiagError{Diags: d, Files: spec.Files()}
	}
	return append(out, spec.Overrides("kernel", "", ks, kcfg)...), nil
}
