// Command tickemu-plugin-hang_cap serves the hang_cap policy out of process.
package main

import (
	"github.com/tickemu/tickemu/examples/hangcap"
	"github.com/tickemu/tickemu/framework/sdk/serve"
)

func main() {
	serve.Serve(hangcap.Factories()...)
}
