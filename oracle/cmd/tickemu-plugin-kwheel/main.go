// SPDX-License-Identifier: GPL-2.0

//go:build kernel_oracle

// The kwheel plugin binary: the "kwheel" timer wheel, the
// kernel's own kernel/time/timer.c (oracle/kwheel), to tickemu. `make
// kwheel` builds it into bin/plugins; put that directory on the plugin
// search path (--plugin-dir or $TICKEMU_PLUGIN_PATH).
package main

import (
	"github.com/tickemu/tickemu/framework/sdk/serve"
	"github.com/tickemu/tickemu/oracle/kwheel"
)

func main() {
	serve.Serve(kwheel.Factory)
}
