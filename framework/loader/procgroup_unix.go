//go:build unix

package loader

import (
	"os/exec"
	"syscall"
)

// setGroupAttr sets Setpgid (and, on Linux, Pdeathsig: procgroup_linux.go).
func setGroupAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup sends SIGKILL to the process group pgid; a group that is already
// gone (ESRCH) is not an error worth reporting.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
