package workload

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// newOfType builds workload type name from an HCL block body (src), as the
// host does.
func newOfType(t *testing.T, name, src string, m kernel.Machine) Workload {
	t.Helper()
	ty, ok := Lookup(name)
	if !ok {
		t.Fatalf("no workload type %q", name)
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), "t.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg, diags := config.DecodeBody(f.Body, nil, ty.Schema, "workload "+name)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	w, err := ty.New("w", cfg.Reader(), m)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestStressNgTimerProgram drives one stress-ng --timer instance's main()
// and handler (stress-timer.c) call by call, without a kernel: the setup
// syscalls, the nanosleep loop with its two invalid nanosleeps before every
// 1025th sleep, and the handler's sigpending, bogo op, getoverrun and re-arm.
func TestStressNgTimerProgram(t *testing.T) {
	for _, rearm := range []bool{true, false} {
		t.Run(fmt.Sprint("rearm=", rearm), func(t *testing.T) {
			w := newOfType(t, "stress_ng_timer", fmt.Sprintf("freq = \"250kHz\"\nrearm_in_handler = %v\n", rearm),
				kernel.Machine{CPUs: 1, HZ: 1000}).(*stressNgTimer)
			p := w.program()
			next := func(r kernel.Result) kernel.Action { return p.Next(nil, r) }

			// stress_run()'s child: alarm(86400), then shim_usleep(0).
			if got, want := next(kernel.Result{}), (kernel.Alarm{Seconds: 86400}); got != want {
				t.Fatalf("alarm = %#v, want %#v", got, want)
			}
			if got, want := next(kernel.Result{}), (kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 0}); got != want {
				t.Fatalf("usleep(0) = %#v, want %#v", got, want)
			}
			if got, want := next(kernel.Result{}), (kernel.Sigprocmask{How: kernel.SigSetmask, Set: kernel.SigMask(kernel.SIGINT)}); got != want {
				t.Fatalf("1st action = %#v, want %#v", got, want)
			}
			sa, ok := next(kernel.Result{}).(kernel.Sigaction)
			if !ok || sa.Signo != kernel.SIGRTMIN || sa.Flags != kernel.SaNocldstop|kernel.SaOnstack || sa.Handler == nil {
				t.Fatalf("2nd action = %#v, want sigaction(SIGRTMIN, SA_NOCLDSTOP|SA_ONSTACK, handler)", sa)
			}
			if got, want := next(kernel.Result{}), (kernel.TimerCreate{Clock: sdk.ClockRealtime, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN}); !reflect.DeepEqual(got, want) {
				t.Fatalf("3rd action = %#v, want %#v", got, want)
			}
			settime := kernel.TimerSettime{ID: 7, Value: 4000, Interval: 4000} // 1e9 / 250 kHz
			if got := next(kernel.Result{Ret: 7}); got != settime {
				t.Fatalf("4th action = %#v, want %#v (the timer id timer_create returned)", got, settime)
			}
			sleep := kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 10_000_000}
			invalid := kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: -1}
			var loop []kernel.Action
			for range 2 * 1027 {
				loop = append(loop, next(kernel.Result{}))
			}
			for i, a := range loop {
				want := sleep
				if n := i % 1027; n == 1024 || n == 1025 {
					want = invalid
				}
				if a != want {
					t.Fatalf("loop action %d = %#v, want %#v", i, a, want)
				}
			}

			h := sa.Handler(nil, kernel.SigInfo{})
			hn := func(r kernel.Result) kernel.Action { return h.Next(nil, r) }
			now := w.warmup
			steps := []kernel.Action{
				hn(kernel.Result{Now: now}),         // sigpending()
				hn(kernel.Result{Now: now}),         // the bogo op, then the handler's work
				hn(kernel.Result{Now: now}),         // timer_getoverrun()
				hn(kernel.Result{Ret: 3, Now: now}), // 3 overruns: re-arm or return
				hn(kernel.Result{Now: now}),
			}
			want := []kernel.Action{kernel.Sigpending{}, kernel.Compute{NS: 200}, kernel.TimerGetoverrun{ID: 7}, settime, kernel.Return{}}
			if !rearm {
				want = append(want[:3], kernel.Return{})
				steps = steps[:4]
			}
			if !reflect.DeepEqual(steps, want) {
				t.Errorf("handler actions = %#v, want %#v", steps, want)
			}
			if w.b.ops != 1 || w.overruns != 3 {
				t.Errorf("after one handler run: bogo ops %d, overruns %d; want 1 and 3", w.b.ops, w.overruns)
			}
		})
	}
}

// TestSequence: setup steps run once, in order, then the loop forever.
func TestSequence(t *testing.T) {
	var got []int64
	rec := func(n int64) step {
		return func(r kernel.Result) kernel.Action { got = append(got, n); return kernel.Compute{NS: n} }
	}
	p := sequence([]step{rec(1), rec(2)}, []step{rec(10), rec(20), rec(30)})
	for range 8 {
		p.Next(nil, kernel.Result{})
	}
	if want := []int64{1, 2, 10, 20, 30, 10, 20, 30}; !reflect.DeepEqual(got, want) {
		t.Errorf("sequence ran %v, want %v", got, want)
	}
}

// TestInstanceCPUs: instances go round robin over the cpulist, or instance
// i on CPU i mod N without one.
func TestInstanceCPUs(t *testing.T) {
	for _, tc := range []struct {
		list    string
		n, ncpu int
		want    []int
		err     bool
	}{
		{"", 5, 2, []int{0, 1, 0, 1, 0}, false},
		{"2-3", 3, 4, []int{2, 3, 2}, false},
		{"1", 2, 4, []int{1, 1}, false},
		{"", 0, 4, nil, true},
		{"4", 1, 4, nil, true},
	} {
		c := sdk.Config{"cpus": tc.list}.Reader()
		got, err := instanceCPUs(c, tc.n, tc.ncpu)
		if err == nil && c.Diagnostics().HasErrors() {
			err = c.Diagnostics()
		}
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("instanceCPUs(%q, %d, %d) = %v, %v; want %v (error %v)", tc.list, tc.n, tc.ncpu, got, err, tc.want, tc.err)
		}
	}
}

// TestStressNgTimerProcReadPerInstance: each instance reads /proc/self/timers
// at its own 65536th bogo op (stress_bogo_get(s_args) is the instance's
// counter), not when the sum over all instances reaches a multiple of 65536.
func TestStressNgTimerProcReadPerInstance(t *testing.T) {
	w := newOfType(t, "stress_ng_timer", "instances = 2\n", kernel.Machine{CPUs: 2, HZ: 1000}).(*stressNgTimer)
	// A signal starts the handler afresh: Sigaction's Handler gives its
	// program from the first step, as the host calls it per delivery.
	var handlers [2]func(*kernel.Task, kernel.SigInfo) kernel.Program
	for i := range handlers {
		p := w.program()
		p.Next(nil, kernel.Result{}) // alarm()
		p.Next(nil, kernel.Result{}) // usleep(0)
		p.Next(nil, kernel.Result{}) // sigprocmask
		sa := p.Next(nil, kernel.Result{}).(kernel.Sigaction)
		p.Next(nil, kernel.Result{})                  // timer_create
		p.Next(nil, kernel.Result{Ret: int64(i + 1)}) // timer_settime
		handlers[i] = sa.Handler
	}
	// run is one handler run of instance i; it reports whether it read /proc.
	run := func(i int) bool {
		h := handlers[i](nil, kernel.SigInfo{})
		h.Next(nil, kernel.Result{}) // sigpending()
		read := false
		for {
			a := h.Next(nil, kernel.Result{})
			if s, ok := a.(kernel.Syscall); ok && s.Name == "read" {
				read = true
			}
			if _, ok := a.(kernel.Return); ok {
				return read
			}
		}
	}
	var reads [2][]int
	for op := 1; op <= 65536; op++ {
		for i := range handlers {
			if run(i) {
				reads[i] = append(reads[i], op)
			}
		}
	}
	for i, r := range reads {
		if len(r) != 1 || r[0] != 65536 {
			t.Errorf("instance %d read /proc/self/timers at its ops %v, want only at its 65536th", i, r)
		}
	}
}

// TestStressNgTimerOps: with --timer-ops N each instance stops after
// ceil(N / instances) bogo ops (stress-ng.c V0.15.06): the handler run that
// finds the counter at max_ops disarms the timer and counts nothing
// (stress_timer_handler()'s cancel), the main loop's keep_stressing() after
// its next nanosleep ends the loop, and the instance deletes its timer
// twice, cancels its alarm and exits; bogo ops/s is the ops over the
// instance's own time, from stats->start (before usleep(0)) to its exit.
func TestStressNgTimerOps(t *testing.T) {
	w := newOfType(t, "stress_ng_timer", "instances = 2\nops = 5\n", kernel.Machine{CPUs: 2, HZ: 1000}).(*stressNgTimer)
	if w.maxOps != 3 {
		t.Fatalf("max_ops = %d for 5 ops over 2 instances, want 3", w.maxOps)
	}
	p := w.program()
	w.inst = append(w.inst, p)
	at := func(ns int64) kernel.Result { return kernel.Result{Now: ktime.Time(ns)} }
	p.Next(nil, at(0))   // alarm()
	p.Next(nil, at(100)) // usleep(0): stats->start
	p.Next(nil, at(200)) // sigprocmask
	sa := p.Next(nil, at(300)).(kernel.Sigaction)
	p.Next(nil, at(400))                         // timer_create
	p.Next(nil, kernel.Result{Ret: 7, Now: 500}) // timer_settime
	if a := p.Next(nil, at(600)); a != p.sleep { // the loop's first nanosleep
		t.Fatalf("loop = %#v, want the nanosleep", a)
	}
	handler := func() []kernel.Action {
		h := sa.Handler(nil, kernel.SigInfo{})
		var out []kernel.Action
		for {
			a := h.Next(nil, at(700))
			out = append(out, a)
			if _, ok := a.(kernel.Return); ok {
				return out
			}
		}
	}
	for range 3 {
		handler()
	}
	if got := handler(); !reflect.DeepEqual(got, []kernel.Action{kernel.TimerSettime{ID: 7}, kernel.Return{}}) {
		t.Errorf("the handler run at max_ops = %#v, want the disarm and the return", got)
	}
	want := []kernel.Action{kernel.TimerDelete{ID: 7}, kernel.TimerDelete{ID: 7}, kernel.Alarm{}, kernel.Exit{}}
	var got []kernel.Action
	for i := range want {
		got = append(got, p.Next(nil, at(int64(10_000_000+i*1000))))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the interrupted nanosleep: %#v, want %#v", got, want)
	}
	rep := w.Report(nil, ktime.Time(50_000_000))
	if m := rep.Bench[0].Metrics; m[1].Value != 3 || !near(m[0].Value, 3/(float64(10_003_000-100)/1e9)) {
		t.Errorf("bogo ops %v, ops/s %v; want 3 over the instance's 10.0029 ms", m[1].Value, m[0].Value)
	}
}

func near(a, b float64) bool { return a-b < 1e-6*b && b-a < 1e-6*b }

// TestStressNgAlarmSeconds: the alarm attribute is alarm()'s argument, whole
// seconds (alarm_setitimer()), for both stress-ng models; anything else is
// refused naming the attribute.
func TestStressNgAlarmSeconds(t *testing.T) {
	for _, ty := range []string{"stress_ng_timer", "stress_ng_nanosleep"} {
		for _, tt := range []struct {
			alarm string
			ok    bool
		}{{"86400s", true}, {"1s", true}, {"1500ms", false}, {"0s", false}, {"2.5s", false}} {
			t.Run(ty+"/"+tt.alarm, func(t *testing.T) {
				typ, _ := Lookup(ty)
				f, diags := hclsyntax.ParseConfig([]byte("alarm = \""+tt.alarm+"\"\n"), "t.hcl", hcl.InitialPos)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				cfg, diags := config.DecodeBody(f.Body, nil, typ.Schema, "workload "+ty)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				_, err := typ.New("w", cfg.Reader(), kernel.Machine{CPUs: 1, HZ: 1000})
				var fe *FieldError
				switch {
				case tt.ok && err != nil:
					t.Fatalf("alarm = %q: %v", tt.alarm, err)
				case !tt.ok && (!errors.As(err, &fe) || fe.Attr != "alarm"):
					t.Fatalf("alarm = %q: error %v, want one naming alarm", tt.alarm, err)
				}
			})
		}
	}
}
