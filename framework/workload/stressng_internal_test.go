package workload

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
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
		got, err := instanceCPUs(tc.list, tc.n, tc.ncpu)
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
