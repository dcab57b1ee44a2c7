// Command tickemu-plugin-fixed serves the "fixed" clock event device to
// tickemu. Put it on the plugin search path (--plugin-dir,
// $TICKEMU_PLUGIN_PATH or ./plugins); tickemu starts it when a scenario says
// plugin = "fixed". Run by hand, it explains that it is a plugin and exits.
package main

import (
	"github.com/tickemu/tickemu/examples/fixed"
	"github.com/tickemu/tickemu/framework/sdk/serve"
)

func main() {
	serve.Serve(fixed.Factory)
}
