//go:build unix && !linux

package loader

import "syscall"

// setDeathSignal: no parent-death signal outside Linux; the plugin's parent
// watch (framework/sdk/serve) stands in for it.
func setDeathSignal(*syscall.SysProcAttr) {}
