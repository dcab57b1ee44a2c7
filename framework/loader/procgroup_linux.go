package loader

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the plugin process when its parent
// dies (prctl PR_SET_PDEATHSIG), which covers a host killed by SIGKILL, the
// one signal the host cannot act on. The kernel ties the signal to the thread
// that forked, not the process (golang/go#27505); the Go runtime ends an OS
// thread only when a goroutine locked to it (runtime.LockOSThread) returns
// without unlocking, which the goroutines that start plugins never do.
// Processes the plugin forks do not inherit it: the host kills their group,
// and the plugin's own parent watch (framework/sdk/serve) does too.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
