// Command tickemu-plugin-fixed serves the "fixed" clock event device to
// tickemu. Put it on the plugin search path (--plugin-dir or
// $TICKEMU_PLUGIN_PATH); tickemu starts it when a scenario says
// plugin = "fixed". Run by hand, it explains that it is a plugin and exits;
// run with --debug, it serves on its own for tickemu to reattach to.
package main

import (
	"github.com/tickemu/tickemu/examples/fixed"
	"github.com/tickemu/tickemu/framework/sdk/serve"
)

func main() {
	serve.Serve(fixed.Factory)
}
