package shim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/model"
	"github.com/tickemu/tickemu/framework/sdk/shim"
	"github.com/tickemu/tickemu/framework/sdk/spread"
)

// modelDevice is a fake device that declares a DeadlineModel; lie makes its
// SetNextEvent answers differ from the model from the nth write on.
type modelDevice struct {
	shimtest.ClockEventDevice
	model  sdk.DeadlineModel
	writes int
	lieAt  int // 0: never
}

func (d *modelDevice) DeadlineModel() (sdk.DeadlineModel, bool) { return d.model, true }

// constantModel answers every write and ack the same; spreadModel draws
// its latencies and EOI costs (as lapic does in a KVM guest's profile).
var (
	constantModel = sdk.DeadlineModel{CounterNum: 3, CounterDen: 1, Scale: 8, WriteCost: 60, AckCost: 50,
		StopCost: 260, OneshotCost: 100, Latency: 50}
	spreadModel = sdk.DeadlineModel{CounterNum: 3, CounterDen: 1, Scale: 8, WriteCost: 8000, AckCost: 7000,
		StopCost: 8200, OneshotCost: 100, Latency: 10000, PastDeadline: true, PastLatency: 0,
		LatencySpread: mustSpread("p1=-7us p50=-300ns p99=+24us"), AckCostSpread: mustSpread("p10=-1.2us p90=+1.3us"),
		Seed: 7, Stream: "model/local"}
)

func mustSpread(s string) spread.Quantiles {
	q, err := spread.Parse(s)
	if err != nil {
		panic(err)
	}
	return q
}

func newModelDevice(lieAt int) *modelDevice { return newModelDeviceOf(constantModel, lieAt) }

// newModelDeviceOf is a device that answers from its own evaluator of dm
// (its own copy of the random stream, when dm has a spread).
func newModelDeviceOf(dm sdk.DeadlineModel, lieAt int) *modelDevice {
	d := &modelDevice{model: dm, lieAt: lieAt}
	m, _ := model.NewDeadline(d.model)
	d.ClockEventDevice = shimtest.ClockEventDevice{
		Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindClockEvent, Name: "model"}},
		SetNextEventFn: func(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
			d.writes++
			r := m.SetNextEvent(now, ticks)
			if d.lieAt > 0 && d.writes >= d.lieAt {
				r.Cost++
			}
			return r
		},
		SetStateFn: func(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
			c, f, _ := m.SetState(st)
			return c, f
		},
		AckFn: func(ch int, now ktime.Time) (int64, ktime.Time) { return m.Ack() },
	}
	return d
}

// TestDeadlineModelBatches: with a declared model, writes, acks and oneshot
// state changes make no round trip of their own; they ride along with the
// next call the host waits for (Counters here), or go out alone every
// maxBatch calls, and the device sees all of them, in order. With a spread
// the host draws the latencies and EOI costs the device draws, from its
// own copy of the device's stream: the device's answers, checked when they
// come, are the ones the host used.
func TestDeadlineModelBatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		dm   sdk.DeadlineModel
	}{{"constant", constantModel}, {"spread", spreadModel}} {
		t.Run(tc.name, func(t *testing.T) { testDeadlineModelBatches(t, tc.dm) })
	}
}

func testDeadlineModelBatches(t *testing.T, dm sdk.DeadlineModel) {
	dev := newModelDeviceOf(dm, 0)
	c, _ := pair(t, factory(sdk.KindClockEvent, "model", dev))
	d := open(t, c, sdk.KindClockEvent, "model", shim.Options{}).(sdk.ClockEventDevice)
	d.Spec()
	want, _ := model.NewDeadline(dm) // a third copy of the stream
	rt0 := shim.RoundTrips()
	const n = 300
	fires := map[ktime.Time]bool{}
	for i := range n {
		now := ktime.Time(100_000 * (i + 1))
		ticks := uint64(100 + i%3*10_000) // past deadlines and future ones
		r, w := d.SetNextEvent(0, now, ticks), want.SetNextEvent(now, ticks)
		if r != w {
			t.Fatalf("SetNextEvent(0, %v, %d) = %+v, want the model's %+v", now, ticks, r, w)
		}
		fires[r.FireAt-now] = true
		if c, f := d.Ack(0, now+500); true {
			if wc, wf := want.Ack(); c != wc || f != wf {
				t.Fatalf("Ack = %d, %v; want the model's %d, %v", c, f, wc, wf)
			}
		}
	}
	if wc, _, _ := want.SetState(sdk.StateOneshotStopped); true {
		if c, _ := d.SetState(0, 0, sdk.StateOneshotStopped, 0); c != wc {
			t.Fatalf("SetState(oneshot_stopped) cost = %d, want the model's %d", c, wc)
		}
	}
	if dm.LatencySpread.Zero() != (len(fires) <= 3) {
		t.Errorf("%d distinct fire offsets in %d writes of 3 lengths; a spread draws many, none 3", len(fires), n)
	}
	held := shim.RoundTrips() - rt0
	if want := uint64(2 * n / 128); held != want {
		t.Errorf("%d modelled calls made %d round trips, want %d (one per full batch)", 2*n+1, held, want)
	}
	d.Counters()
	if dev.writes != n {
		t.Errorf("the device saw %d writes after Counters, want %d", dev.writes, n)
	}
}

// TestDeadlineModelViolation: a device whose answer differs from its own
// model ends the run at the next message, naming the call and both answers.
func TestDeadlineModelViolation(t *testing.T) {
	c, _ := pair(t, factory(sdk.KindClockEvent, "model", newModelDevice(3)))
	d := open(t, c, sdk.KindClockEvent, "model", shim.Options{}).(sdk.ClockEventDevice)
	d.Spec()
	for i := range 5 {
		d.SetNextEvent(0, ktime.Time(1000*(i+1)), 100)
	}
	var ce *sdk.ContractError
	func() {
		defer func() { ce, _ = recover().(*sdk.ContractError) }()
		d.Counters()
	}()
	if ce == nil {
		t.Fatal("Counters after a lying write did not panic with a *sdk.ContractError")
	}
	if ce.Kind != sdk.KindClockEvent || ce.Name != "model" || ce.Call != "SetNextEvent" {
		t.Errorf("ContractError = {%q %q %q}, want {clockevent model SetNextEvent}", ce.Kind, ce.Name, ce.Call)
	}
	for _, w := range []string{"SetNextEvent(0, 3000, 100)", "DeadlineModel gives"} {
		if !strings.Contains(ce.Error(), w) {
			t.Errorf("error %q does not contain %q", ce.Error(), w)
		}
	}
	if te := catchTransport(t, func() { d.Ack(0, 9000) }); te == nil || !errors.Is(te, ce) {
		t.Errorf("a call after the violation = %v, want a TransportError wrapping it", te)
	}
}

// TestStartNextEvent: the hrtimer client sends NextEvent, another session
// makes its call meanwhile (counted as no extra round trip), and the answer
// is read afterwards; a call on the same session before that is a host bug
// the session reports.
func TestStartNextEvent(t *testing.T) {
	for _, grpcOnly := range []bool{false, true} {
		t.Run(map[bool]string{true: "grpc", false: "socket"}[grpcOnly], func(t *testing.T) { testStartNextEvent(t, shim.Options{GRPCOnly: grpcOnly}) })
	}
}

func testStartNextEvent(t *testing.T, o shim.Options) {
	hrt := &shimtest.HRTimerBase{
		Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindHRTimer, Name: "hrt"}},
		NextEventFn: func(cpu int, now ktime.Time, ex sdk.TimerID) ktime.Time {
			return now + ktime.Time(cpu) + ktime.Time(ex)
		},
	}
	c, _ := pair(t, factory(sdk.KindHRTimer, "hrt", hrt), factory(sdk.KindClockEvent, "dev", newDevice("dev")))
	h := open(t, c, sdk.KindHRTimer, "hrt", o)
	d := open(t, c, sdk.KindClockEvent, "dev", o).(sdk.ClockEventDevice)
	st, ok := h.(interface {
		StartNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) func() ktime.Time
	})
	if !ok {
		t.Fatalf("the hrtimer client %T has no StartNextEvent", h)
	}
	rt0 := shim.RoundTrips()
	wait := st.StartNextEvent(2, 1000, 30)
	if r := d.SetNextEvent(0, 100, 5); r.FireAt != 105 {
		t.Fatalf("SetNextEvent in between = %+v, want FireAt 105", r)
	}
	if got := wait(); got != 1032 {
		t.Errorf("StartNextEvent(2, 1000, 30) waited = %v, want 1032", got)
	}
	if n := shim.RoundTrips() - rt0; n != 1 {
		t.Errorf("the two overlapping calls counted %d round trips, want 1", n)
	}
	st.StartNextEvent(0, 0, 0)
	te := catchTransport(t, func() { h.(sdk.HRTimerBase).NextEvent(0, 0, 0) })
	if te == nil || !strings.Contains(te.Error(), "while the answer to NextEvent is awaited") {
		t.Errorf("a call before the awaited answer = %v, want a host-bug TransportError", te)
	}
}
