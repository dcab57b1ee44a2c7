package cli

import (
	"os"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
)

// catalog builds the plugin catalog: the linked-in plugins (builtins and
// extras), tickemu itself for running them out of process, and the plugin search path.
func (a *App) catalog(c *common, log zerolog.Logger) (*loader.Catalog, error) {
	return a.catalogWith(c, log, true)
}

// catalogWith is catalog, without the lock file if withLock is false.
func (a *App) catalogWith(c *common, log zerolog.Logger, withLock bool) (*loader.Catalog, error) {
	o, err := c.pluginOptions(withLock)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	o.Builtins, o.Self, o.Logger = a.factories, self, log
	return loader.New(o)
}

// newOpener returns the plugin opener for a command and a function that stops
// every plugin process started through it.
func (a *App) newOpener(c *common, log zerolog.Logger) (experiment.Opener, func(), error) {
	cat, err := a.catalog(c, log)
	if err != nil {
		return nil, func() {}, err
	}
	return catalogOpener{cat}, loader.CleanupClients, nil
}

// catalogOpener adapts a loader.Catalog to experiment.Opener.
type catalogOpener struct{ c *loader.Catalog }

func (o catalogOpener) Describe(kind sdk.Kind, name string) (sdk.Info, sdk.Schema, error) {
	return o.c.Describe(kind, name)
}

func (o catalogOpener) Open(kind sdk.Kind, name, isolation string) (experiment.Instance, error) {
	in, err := o.c.Open(kind, name, loader.Isolation(isolation))
	if err != nil {
		return nil, err
	}
	return instance{in}, nil
}

// Names lists the plugins of a kind (experiment.Lister: per-plugin settings
// blocks), without starting binaries.
func (o catalogOpener) Names(kind sdk.Kind) []string { return o.c.Names(kind) }

type instance struct{ *loader.Instance }

func (i instance) Describe() string { return i.String() }
