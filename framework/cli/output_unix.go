//go:build unix

package cli

import (
	"os"
	"syscall"
)

// closedStdout reports whether f is the runtime's stand-in for a closed
// descriptor: the null device, opened read-write.
func closedStdout(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return true
	}
	null, err := os.Stat(os.DevNull)
	if err != nil || !os.SameFile(fi, null) {
		return false
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	return errno == 0 && flags&syscall.O_ACCMODE == syscall.O_RDWR
}
