//go:build unix

package serve

import (
	"os"
	"syscall"
)

// killOwnGroup kills this plugin process's group, itself included, when it
// leads it (tickemu starts every plugin as the leader of its own group), so
// that processes the plugin forked do not outlive a host that died without
// killing them. A process that does not lead its group (started by an older
// host) must not signal it: the group is its host's, or a shell's.
func killOwnGroup() {
	if syscall.Getpgrp() == os.Getpid() {
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
}
