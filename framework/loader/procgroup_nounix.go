//go:build !unix

package loader

import "os/exec"

// No process groups outside Unix: go-plugin's Kill of the direct child is all.
func setGroupAttr(*exec.Cmd) {}
func killGroup(int)          {}
