// SPDX-License-Identifier: GPL-2.0

//go:build !kernel_oracle

// Command tickemu-plugin-kwheel serves the kernel's timer.c as the "kwheel"
// wheel plugin. It does so only when built with the build tag
// kernel_oracle (`make kwheel`, docs/kernel-oracle.md); built without it,
// it says so and exits.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "tickemu-plugin-kwheel: built without -tags kernel_oracle; build it with `make kwheel`")
	os.Exit(1)
}
