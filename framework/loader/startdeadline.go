package loader

import (
	"os"
	"time"

	"github.com/tickemu/tickemu/framework/sdk/cpuwait"
)

// startDeadline bounds a plugin process's start (its go-plugin handshake)
// and, for a binary being described, its Describe call too, by the rule of
// the call deadlines (shim's callDeadline): wall time, less the time the
// host and the plugin's process group spent waiting for a CPU, up to
// cpuwait.MaxStretch times the timeout. Starting a process is CPU work (a
// Go runtime, an interpreter, the race detector's shadow memory) done
// while every other runnable thread on the machine competes for the CPU;
// on a loaded 2-core machine a healthy handshake can take several times a
// 1 s deadline. A plugin that sleeps or blocks instead of answering gets
// no more than the timeout where there is CPU to spare (on a loaded
// machine even idle processes wait for a CPU at each wakeup, and the cap
// ends it), and a stopped one no more than the timeout anywhere.
//
// On expiry it kills the plugin's process group, which ends go-plugin's
// wait for the handshake line (or the Describe call); the owner then asks
// stop whether that is why, and words the timeout itself.
type startDeadline struct {
	// runner receives the process's runner once go-plugin has made it; its
	// started channel says when the process exists.
	runner chan *groupRunner
	quit   chan struct{}
	done   chan struct{}
	// read returns the reader of the process group pgid's samples.
	read func(pgid int) cpuwait.Reader
	// expired is written before done is closed.
	expired bool
}

// hostAndGroup reads the host and the plugin's process group: the host's
// goroutine reading the handshake must get a CPU too.
func hostAndGroup(pgid int) cpuwait.Reader { return cpuwait.Procs(true, os.Getpid(), pgid) }

// watchStart arms the deadline of a start beginning now, judged on what
// read says (hostAndGroup); a timeout of noDeadline or more arms none. The
// owner sends the runner on runner (buffered) as soon as it exists, and
// calls stop once.
func watchStart(timeout time.Duration, read func(pgid int) cpuwait.Reader) *startDeadline {
	d := &startDeadline{runner: make(chan *groupRunner, 1), quit: make(chan struct{}), done: make(chan struct{}), read: read}
	if timeout >= noDeadline {
		close(d.done)
		return d
	}
	go d.run(timeout, time.Now())
	return d
}

// run is the deadline's goroutine: a cpuwait.Judge ticked by a timer, as
// in shim's callDeadline. The judge's readings start once the process
// exists: until then the host is forking it (or checking its checksum),
// the host's own work, and the first tick waits for it.
func (d *startDeadline) run(timeout time.Duration, begin time.Time) {
	defer close(d.done)
	var r *groupRunner
	var read cpuwait.Reader // set with r
	judge := cpuwait.New(timeout, func() (cpuwait.Sample, bool) { return read() })
	timer := time.NewTimer(judge.First())
	defer timer.Stop()
	for {
		select {
		case <-d.quit:
			return
		case <-timer.C:
		}
		if r == nil {
			select {
			case <-d.quit:
				return
			case r = <-d.runner:
			}
			select {
			case <-d.quit:
				return
			case <-r.started:
			}
			if r.group.pgid <= 0 {
				return // it did not start: go-plugin reports why
			}
			read = d.read(r.group.pgid)
		}
		now := time.Now()
		v := judge.Tick(1, now, now.Sub(begin))
		if !v.Failed() {
			timer.Reset(v.Next)
			continue
		}
		d.expired = true
		r.killGroup()
		return
	}
}

// stop disarms the deadline and reports whether it expired (the plugin's
// process group was killed).
func (d *startDeadline) stop() bool {
	close(d.quit)
	<-d.done
	return d.expired
}
