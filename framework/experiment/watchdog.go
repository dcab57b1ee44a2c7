package experiment

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/cpuwait"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// DefaultCallTimeout is the deadline of one call into a linked-in plugin
// when Options.CallTimeout is 0: the same 5 s a plugin process gets
// (framework/sdk/shim's DefaultCallTimeout, which the loader uses).
const DefaultCallTimeout = 5 * time.Second

// watchdog holds a linked-in plugin to the deadline a plugin process is
// held to. A call into a plugin process that does not answer is cut off by
// its connection's deadline; a call into linked-in code cannot be cut off,
// and one that never returns used to hang the run for ever, --max-wall
// included (the wall-clock bound is checked between events).
//
// It costs the calls nothing: the run's goroutine counts a beat between
// steps (every sim.PollEvents events, and before each step of the build
// that calls a plugin), and a goroutine of the run's own checks the count
// every tick. When the beats stop for the call deadline (time the process
// spent waiting for a CPU not counted, up to cpuwait.MaxStretch deadlines:
// a run starved by a loaded machine is slow, not stuck), or the run passes
// --max-wall, the run's goroutine's stack says where it is: inside a
// linked-in plugin's code, the plugin and the call the host made are named
// (as a panic's are, linkedPanic) and the run ends with an error wrapping
// sdk.ErrPluginTimeout, exit status 1. Anywhere else (the host's own work,
// a wait on a plugin process, whose own deadline applies) it waits on. The
// goroutine stuck in the plugin cannot be stopped: it is abandoned, with the
// kernel it was using, and ends with the process.
type watchdog struct {
	beat atomic.Uint64
	gid  atomic.Int64 // the run's goroutine, once it started

	mu        sync.Mutex
	plugins   []linkedPlugin
	instances []Instance
}

// shimPackage is the package of the plugin processes' clients, taken from
// its type rather than written out, so that a move of the package cannot
// leave the watchdog treating a plugin process's client as linked-in code
// (it did once: the two deadlines then raced, and the watchdog's message
// lacked the plugin's pid).
var shimPackage = reflect.TypeOf(shim.Conn{}).PkgPath()

// tick counts a beat: the run is between plugin calls.
func (w *watchdog) tick() {
	if w != nil {
		w.beat.Add(1)
	}
}

// opened records a plugin as soon as it is opened, before the host calls it
// (the watchdog must not call a plugin itself: Info would hang too).
func (w *watchdog) opened(p linkedPlugin, in Instance) {
	if w == nil {
		return
	}
	w.mu.Lock()
	// A plugin process's value is the host's client (framework/sdk/shim):
	// its own deadline applies.
	if p.pkgPath != shimPackage {
		w.plugins = append(w.plugins, p)
	}
	w.instances = append(w.instances, in)
	w.mu.Unlock()
}

// callTimeout is o's call deadline; negative: none.
func callTimeout(o Options) time.Duration {
	if o.CallTimeout == 0 {
		return DefaultCallTimeout
	}
	return o.CallTimeout
}

// watched runs run on a goroutine of its own under a watchdog (none when
// the call deadline is off) and returns its result, or the error of a
// linked-in plugin's call that overran the deadline or --max-wall.
func watched[T any](o Options, maxWall time.Duration, run func(w *watchdog) (T, error)) (T, error) {
	timeout := callTimeout(o)
	if timeout < 0 && maxWall <= 0 {
		return run(nil)
	}
	w := &watchdog{}
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		w.gid.Store(goroutineID())
		v, err := run(w)
		done <- outcome{v, err}
	}()
	sw := newStallWatch(o, timeout, maxWall, w.beat.Load())
	t := time.NewTicker(sw.period)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case now := <-t.C:
			why := sw.expired(now, w.beat.Load())
			if why == "" {
				continue
			}
			if te := w.stuck(why); te != nil {
				sw.warnStarved()
				// The answer may have come meanwhile.
				select {
				case r := <-done:
					return r.v, r.err
				default:
				}
				w.killProcesses()
				var zero T
				return zero, te
			}
		}
	}
}

// stallWatch tells from the run's beats, sampled every period, when a call
// has gone on past the call deadline timeout (negative: none) or the run
// past maxWall (0: none). Its judge tells a stall from a run starved of CPU:
// it is asked at judge.First() into a stall and then when it says.
type stallWatch struct {
	log              zerolog.Logger
	timeout, maxWall time.Duration
	period           time.Duration
	judge            *cpuwait.Judge // nil: no call deadline
	check            time.Duration  // when into a stall to ask the judge next
	start, since     time.Time      // the run's start, the last beat's sample
	last             uint64         // the last beat seen
	// starved and stalled are the CPU wait and the stall of a deadline
	// that expired at the last sample after extensions, for warnStarved.
	starved, stalled time.Duration
	// wallJudge and wallCheck are judge and check for a stall past
	// maxWall (nil: no maxWall): the stall must last a period, CPU wait
	// not counted, as a call must last its deadline.
	wallJudge *cpuwait.Judge
	wallCheck time.Duration
}

// newStallWatch starts watching a run whose beat count is beat now.
func newStallWatch(o Options, timeout, maxWall time.Duration, beat uint64) *stallWatch {
	sw := &stallWatch{log: o.Log, timeout: timeout, maxWall: maxWall, period: 100 * time.Millisecond, last: beat}
	if timeout > 0 {
		sw.period = min(sw.period, max(timeout/10, time.Millisecond))
		sw.judge = cpuwait.New(timeout, cpuwait.Procs(false, os.Getpid()))
		sw.check = sw.judge.First()
	}
	if maxWall > 0 {
		sw.wallJudge = cpuwait.New(sw.period, cpuwait.Procs(false, os.Getpid()))
		sw.wallCheck = sw.wallJudge.First()
	}
	sw.start = time.Now()
	sw.since = sw.start
	return sw
}

// expired says, at the sample now with the beat count beat, why the run is
// to be stopped: "" while it is beating, or stalled within the deadline
// (extended while it waited for a CPU) and within maxWall.
func (sw *stallWatch) expired(now time.Time, beat uint64) string {
	sw.starved = 0
	if beat != sw.last {
		sw.last, sw.since = beat, now
		if sw.judge != nil {
			sw.check = sw.judge.First()
		}
		if sw.wallJudge != nil {
			sw.wallCheck = sw.wallJudge.First()
		}
		return ""
	}
	stalled := now.Sub(sw.since)
	if sw.judge != nil && stalled >= sw.check {
		v := sw.judge.Tick(sw.last, now, stalled)
		if v.Failed() {
			sw.starved, sw.stalled = v.Starved, stalled
			return fmt.Sprintf("no answer within %v", sw.timeout)
		}
		sw.check = stalled + v.Next
	}
	if sw.maxWall > 0 && now.Sub(sw.start) >= sw.maxWall+sw.period && stalled >= sw.wallCheck {
		// Past max_wall the run's own check between events should have
		// stopped it; a run that has not beaten for a period is stuck,
		// unless it spent that period waiting for a CPU (a loaded machine:
		// it then gets more periods, up to cpuwait.MaxStretch).
		v := sw.wallJudge.Tick(sw.last, now, stalled)
		if v.Failed() {
			return fmt.Sprintf("no answer within %v: max_wall %v reached", stalled.Round(time.Millisecond), sw.maxWall)
		}
		sw.wallCheck = stalled + v.Next
	}
	return ""
}

// warnStarved logs how long the run waited for a CPU while the deadline
// that just expired was extended: the error's message is the plugin
// process's, this is the log's. Called only once the stall is found to be
// a linked-in plugin's: while the run waits on a plugin process (whose own
// deadline ends the call) the deadline expires again at every sample, and
// a warning about a linked-in plugin, ten a second, would be false.
func (sw *stallWatch) warnStarved() {
	if sw.starved > 0 {
		sw.log.Warn().Dur("stalled", sw.stalled).Dur("cpu_wait", sw.starved).
			Msg("linked-in plugin call deadline: extended while the run waited for a CPU, then expired")
	}
}

// stuck attributes the run goroutine's current frames to a linked-in
// plugin: nil when it is not inside one's code.
func (w *watchdog) stuck(why string) *sdk.TransportError {
	fns := goroutineFuncs(w.gid.Load())
	w.mu.Lock()
	plugins := w.plugins
	w.mu.Unlock()
	p, call := pluginCall(fns, plugins)
	if p == nil {
		return nil
	}
	return &sdk.TransportError{Kind: p.kind, Name: p.name, Call: methodName(call), Err: timeoutError(why)}
}

// timeoutError is the message of a plugin process's call deadline ("no
// answer within 5s"), wrapping sdk.ErrPluginTimeout as that one does.
type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (e timeoutError) Unwrap() error { return sdk.ErrPluginTimeout }

// killProcesses ends the run's plugin processes; the kernel is left alone,
// its goroutine still running.
func (w *watchdog) killProcesses() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range w.instances {
		in.Kill()
	}
}

// goroutineID is the calling goroutine's id, from its stack's header.
func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id int64
	fmt.Sscanf(string(buf[:n]), "goroutine %d ", &id)
	return id
}

// goroutineFuncs lists the functions on goroutine id's stack, innermost
// first, from a dump of every goroutine (the only way to see another
// goroutine's frames).
func goroutineFuncs(id int64) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte(fmt.Sprintf("goroutine %d [", id))
	i := bytes.Index(buf, head)
	if i < 0 {
		return nil
	}
	g := buf[i:]
	if end := bytes.Index(g, []byte("\n\n")); end >= 0 {
		g = g[:end]
	}
	var fns []string
	for _, line := range strings.Split(string(g), "\n")[1:] {
		if line == "" || line[0] == '\t' {
			continue
		}
		// "pkg/path.(*T).M(0x1, ...)" or "created by ..."
		if strings.HasPrefix(line, "created by ") {
			break
		}
		if p := strings.LastIndexByte(line, '('); p > 0 {
			line = line[:p]
		}
		fns = append(fns, line)
	}
	return fns
}
