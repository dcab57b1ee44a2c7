package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/tickemu/tickemu/framework/loader"
)

// exitSignals are the signals that end tickemu. Go's default for them is to
// exit at once, which leaves plugin processes to notice their host is gone
// (framework/sdk/serve's parent watch, Pdeathsig on Linux) and the processes
// they forked running; tickemu kills every plugin process group first.
var exitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// interruptHandler is the one place a command can take a signal over: compare
// sets one, to write the runs that finished before exiting. Plugin process
// groups are killed first whoever handles the signal.
var interruptHandler struct {
	sync.Mutex
	fn func(os.Signal)
}

// onInterrupt makes the first exit signal call fn (after the plugin groups
// are killed) instead of exiting: the command then finishes, writes what it
// has and returns 128+signal itself. A second signal exits at once. The
// returned function removes fn.
func onInterrupt(fn func(os.Signal)) (remove func()) {
	interruptHandler.Lock()
	interruptHandler.fn = fn
	interruptHandler.Unlock()
	return func() {
		interruptHandler.Lock()
		interruptHandler.fn = nil
		interruptHandler.Unlock()
	}
}

// signalStatus is the conventional exit status for a command ended by s.
func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// watchSignals kills every plugin process group when one of exitSignals
// arrives, then either hands the signal to the command's onInterrupt
// handler or exits with 128+signal; stop ends the watch.
func watchSignals(stderr io.Writer) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, exitSignals...)
	done := make(chan struct{})
	var mu sync.Mutex
	exiting := false // the handler goroutine is calling os.Exit
	handled := false // a command took the signal and returns by itself
	exit := func(s os.Signal, msg string) {
		mu.Lock()
		exiting = true
		mu.Unlock()
		loader.KillPluginGroups()
		fmt.Fprintf(stderr, "tickemu: %v: %s\n", s, msg)
		loader.CleanupClients()
		os.Exit(signalStatus(s))
	}
	go func() {
		select {
		case s := <-ch:
			interruptHandler.Lock()
			fn := interruptHandler.fn
			interruptHandler.Unlock()
			if fn == nil {
				exit(s, "stopped, plugin processes killed")
				return
			}
			mu.Lock()
			handled = true
			mu.Unlock()
			loader.KillPluginGroups()
			fmt.Fprintf(stderr, "tickemu: %v: stopping; the runs that finished are written, the others marked (again to exit at once)\n", s)
			fn(s)
			select {
			case s := <-ch:
				exit(s, "stopped at once, plugin processes killed")
			case <-done:
			}
		case <-done:
		}
	}()
	return func() {
		mu.Lock()
		ex, h := exiting, handled
		mu.Unlock()
		if ex {
			// The command returned because its plugins were killed: the
			// handler is exiting with the signal's status.
			select {}
		}
		signal.Stop(ch)
		close(done)
		if h {
			loader.CleanupClients()
		}
	}
}
