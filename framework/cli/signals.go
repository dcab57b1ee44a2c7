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

// interruptHandler is the one place a command can take a signal over: run,
// compare and sweeps set one, to end their runs after the current event and
// write what they have before exiting; capture one, to pass the signal on.
// Plugin process groups are killed first, unless the handler keeps them
// (run, compare, sweeps: ending a run after its current event needs its
// plugins; they stop with the run).
var interruptHandler struct {
	sync.Mutex
	fn   func(os.Signal)
	msg  string // what tickemu says it does with the signal
	keep bool   // the plugins stay up for fn's command to end its run
}

// onInterrupt makes the first exit signal call fn (after the plugin groups
// are killed) instead of exiting: the command then finishes, writes what it
// has and returns 128+signal itself. A second signal exits at once. The
// returned function removes fn.
func onInterrupt(msg string, fn func(os.Signal)) (remove func()) {
	return setInterrupt(msg, fn, false)
}

// onInterruptKeepPlugins is onInterrupt for a command that ends its run
// cleanly when fn is called (experiment.Options.Interrupt: after the
// current event), which needs its plugin processes: they are not killed
// before fn, so an out-of-process run prints its partial results as a
// linked-in one does. They are in process groups of their own (loader:
// Setpgid), so a terminal's Ctrl-C reaches tickemu alone; they stop with
// the run (loader.CleanupClients), and a second signal kills them at once.
func onInterruptKeepPlugins(msg string, fn func(os.Signal)) (remove func()) {
	return setInterrupt(msg, fn, true)
}

func setInterrupt(msg string, fn func(os.Signal), keep bool) (remove func()) {
	interruptHandler.Lock()
	interruptHandler.fn, interruptHandler.msg, interruptHandler.keep = fn, msg, keep
	interruptHandler.Unlock()
	return func() {
		interruptHandler.Lock()
		interruptHandler.fn = nil
		interruptHandler.Unlock()
	}
}

// exitHooks run when a signal makes tickemu exit at once (no handler, or a
// second signal): a command that changed the system (capture's tracefs
// settings) puts it back there, since deferred calls do not run on
// os.Exit.
var exitHooks struct {
	sync.Mutex
	fns []func()
}

// onExit adds fn to the hooks run before a signal's os.Exit; the returned
// function removes it.
func onExit(fn func()) (remove func()) {
	exitHooks.Lock()
	exitHooks.fns = append(exitHooks.fns, fn)
	i := len(exitHooks.fns) - 1
	exitHooks.Unlock()
	return func() {
		exitHooks.Lock()
		exitHooks.fns[i] = nil
		exitHooks.Unlock()
	}
}

func runExitHooks() {
	exitHooks.Lock()
	fns := append([]func(){}, exitHooks.fns...)
	exitHooks.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		if fns[i] != nil {
			fns[i]()
		}
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
//
// Once a signal has reached tickemu the exit status is 128+signal, whatever
// the command returns afterwards: killing the plugins makes the run fail
// with a transport error, and the command may return that (status 1) before
// the handler goroutine has even taken the signal from the channel. So stop
// first stops delivery, then lets the handler take any signal already
// delivered, and waits for it: the handler either exits with the signal's
// status or, with no signal (or one a command handled), returns.
func watchSignals(stderr io.Writer) (stop func()) {
	w := &signalWatch{ch: make(chan os.Signal, 2), done: make(chan struct{}), finished: make(chan struct{}), stderr: stderr}
	signal.Notify(w.ch, exitSignals...)
	go w.handle()
	return w.stop
}

// signalWatch is watchSignals' state.
type signalWatch struct {
	ch       chan os.Signal
	done     chan struct{} // stop was called; ch gets no more signals
	finished chan struct{} // the handler returned without exiting
	handled  bool          // a command took the signal and returns by itself
	stderr   io.Writer
}

// exit kills the plugins, puts back what the command changed and exits
// with s's status.
func (w *signalWatch) exit(s os.Signal, msg string) {
	loader.KillPluginGroups()
	runExitHooks()
	clearStatusLine()
	fmt.Fprintf(w.stderr, "tickemu: %v: %s\n", s, msg)
	loader.CleanupClients()
	os.Exit(signalStatus(s))
}

// next returns the next signal, or nil once stop was called and no signal
// delivered before it is left in ch.
func (w *signalWatch) next() os.Signal {
	select {
	case s := <-w.ch:
		return s
	case <-w.done:
		select {
		case s := <-w.ch:
			return s
		default:
			return nil
		}
	}
}

// handle takes the first signal: the command's handler gets it (the
// plugins killed first unless it keeps them), or tickemu exits; a second
// signal exits at once.
func (w *signalWatch) handle() {
	defer close(w.finished)
	s := w.next()
	if s == nil {
		return
	}
	interruptHandler.Lock()
	fn, msg, keep := interruptHandler.fn, interruptHandler.msg, interruptHandler.keep
	interruptHandler.Unlock()
	if fn == nil {
		w.exit(s, "stopped, plugin processes killed")
		return
	}
	w.handled = true
	if !keep {
		loader.KillPluginGroups()
	}
	clearStatusLine()
	fmt.Fprintf(w.stderr, "tickemu: %v: %s (again to exit at once)\n", s, msg)
	fn(s)
	if s := w.next(); s != nil {
		w.exit(s, "stopped at once, plugin processes killed")
	}
}

// stop ends the watch. After signal.Stop no signal reaches ch; one
// delivered before is in ch or with the handler, which then exits with its
// status and never closes finished.
func (w *signalWatch) stop() {
	signal.Stop(w.ch)
	close(w.done)
	<-w.finished
	if w.handled {
		loader.CleanupClients()
	}
}
