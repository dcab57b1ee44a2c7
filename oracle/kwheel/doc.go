// SPDX-License-Identifier: GPL-2.0

// Package kwheel is the timer wheel plugin "kwheel": the kernel's own
// kernel/time/timer.c, built by `make kernel-oracle` into
// libktimer-oracle.so (oracle/ktimer), serving the SDK's TimerBase. It runs
// out of process only, as the binary tickemu-plugin-kwheel (`make kwheel`),
// under the shim's licence (GPL-2.0), so that tickemu's binary never links
// kernel code. A scenario selects it with `wheel { plugin = "kwheel" }`, and
// its attribute library names the build, so that `tickemu compare` can run
// a mainline build against a patched one (docs/kernel-oracle.md).
//
// Its files build only with the build tag kernel_oracle.
package kwheel
