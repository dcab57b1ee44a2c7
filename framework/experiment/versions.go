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
