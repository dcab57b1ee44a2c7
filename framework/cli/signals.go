package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/tickemu/tickemu/framework/loader"
)

// exitSignals are the signals that end tickemu. Go's default for them is to
// exit at once, which leaves plugin processes to notice their host is gone
// (framework/sdk/serve's parent watch, Pdeathsig on Linux) and the processes
// they forked running; tickemu kills every plugin process group first.
var exitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// watchSignals kills every plugin process group and exits with 128+signal
// when one of exitSignals arrives; stop ends the watch.
func watchSignals(stderr io.Writer) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, exitSignals...)
	done := make(chan struct{})
	var caught atomic.Bool
	go func() {
		select {
		case s := <-ch:
			caught.Store(true)
			loader.KillPluginGroups()
			fmt.Fprintf(stderr, "tickemu: %v: stopped, plugin processes killed\n", s)
			loader.CleanupClients()
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() {
		if caught.Load() {
			// The command returned because its plugins were killed: the
			// handler is exiting with the signal's status.
			select {}
		}
		signal.Stop(ch)
		close(done)
	}
}
