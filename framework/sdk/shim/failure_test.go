package shim_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/tickemu/tickemu/framework/internal/shimtest"
	"github.com/tickemu/tickemu/framework/sdk"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

func newDevice(name string) *shimtest.ClockEventDevice {
	return &shimtest.ClockEventDevice{
		Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindClockEvent, Name: name}},
		SetNextEventFn: func(ch int, now ktime.Time, ticks uint64) sdk.ProgramResult {
			return sdk.ProgramResult{FireAt: now.Add(int64(ticks)), Cost: 10}
		},
	}
}

// TestStoppedServer: a server that goes away mid-run turns the next call into
// a TransportError that says the plugin exited, and every later call fails the
// same way, on the gRPC stream and on a session socket. (A stopped server
// cancels its streams asynchronously; the socket session ends when its stream
// does, so there a call or two may still be answered first. A plugin process
// that dies closes the socket at once.)
func TestStoppedServer(t *testing.T) {
	for _, grpcOnly := range []bool{true, false} {
		t.Run(map[bool]string{true: "grpc", false: "socket"}[grpcOnly], func(t *testing.T) {
			c, s := pair(t, factory(sdk.KindClockEvent, "dev", newDevice("dev")))
			d := open(t, c, sdk.KindClockEvent, "dev", shim.Options{GRPCOnly: grpcOnly}).(sdk.ClockEventDevice)
			if got := d.SetNextEvent(0, 100, 5); got.FireAt != 105 {
				t.Fatalf("SetNextEvent(0, 100, 5).FireAt = %v, want 105", got.FireAt)
			}
			s.Stop()
			start := time.Now()
			var te *sdk.TransportError
			for te == nil && time.Since(start) < 5*time.Second {
				te = catchTransport(t, func() { d.SetNextEvent(0, 200, 5) })
				if te == nil && grpcOnly {
					break
				}
				if te == nil {
					time.Sleep(time.Millisecond)
				}
			}
			if te == nil {
				t.Fatal("SetNextEvent after server stop returned, want a *sdk.TransportError panic")
			}
			if te.Kind != sdk.KindClockEvent || te.Name != "dev" || te.Call != "SetNextEvent" || te.Pid != 0 {
				t.Errorf("TransportError = {Kind %q Name %q Call %q Pid %d}, want {clockevent dev SetNextEvent 0}", te.Kind, te.Name, te.Call, te.Pid)
			}
			if !errors.Is(te, sdk.ErrPluginExited) {
				t.Errorf("errors.Is(%v, ErrPluginExited) = false, want true", te)
			}
			t.Logf("stopped: %v", te)
			again := catchTransport(t, func() { d.Ack(0, 300) })
			if again != te {
				t.Errorf("call after failure panicked with %v, want the first failure %v", again, te)
			}
		})
	}
}

// TestCallTimeout: a plugin that does not answer within the call timeout
// gives ErrPluginTimeout, promptly.
func TestCallTimeout(t *testing.T) {
	release := make(chan struct{})
	dev := newDevice("slow")
	dev.AckFn = func(ch int, now ktime.Time) (int64, ktime.Time) {
		<-release
		return 0, ktime.Max
	}
	c, _ := pair(t, factory(sdk.KindClockEvent, "slow", dev))
	defer close(release)
	d := open(t, c, sdk.KindClockEvent, "slow", shim.Options{CallTimeout: 100 * time.Millisecond}).(sdk.ClockEventDevice)
	// A call that answers in time re-arms the timer without firing it.
	for i := range 3 {
		d.SetNextEvent(0, ktime.Time(i), 1)
	}
	start := time.Now()
	te := catchTransport(t, func() { d.Ack(0, 1000) })
	if te == nil {
		t.Fatal("Ack on a hung plugin returned, want a *sdk.TransportError panic")
	}
	if elapsed := time.Since(start); elapsed < 100*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("Ack timed out after %v, want about 100ms", elapsed)
	}
	if !errors.Is(te, sdk.ErrPluginTimeout) || te.Call != "Ack" {
		t.Errorf("TransportError = %v (Call %q), want ErrPluginTimeout during Ack", te, te.Call)
	}
	if msg := te.Error(); !strings.Contains(msg, "stopped answering during Ack: no answer within 100ms") {
		t.Errorf("Error() = %q, want it to say the plugin stopped answering within 100ms", msg)
	}
}

// TestPluginPanic: a panic inside the plugin ends the session with the panic
// value, instead of killing the serving process.
func TestPluginPanic(t *testing.T) {
	dev := newDevice("bad")
	dev.SetStateFn = func(ch int, now ktime.Time, st sdk.DeviceState, period int64) (int64, ktime.Time) {
		panic("invariant broken: channel 3 has no comparator")
	}
	c, _ := pair(t, factory(sdk.KindClockEvent, "bad", dev))
	d := open(t, c, sdk.KindClockEvent, "bad", shim.Options{}).(sdk.ClockEventDevice)
	te := catchTransport(t, func() { d.SetState(3, 0, sdk.StateOneshot, 0) })
	if te == nil {
		t.Fatal("SetState on a panicking plugin returned, want a *sdk.TransportError panic")
	}
	if !strings.Contains(te.Error(), "invariant broken: channel 3 has no comparator") || te.Call != "SetState" {
		t.Errorf("TransportError = %v (Call %q), want the plugin's panic value during SetState", te, te.Call)
	}
	t.Logf("panic: %.300s", te.Error())
	// The server survives: a new session works.
	d2 := open(t, c, sdk.KindClockEvent, "bad", shim.Options{}).(sdk.ClockEventDevice)
	if got := d2.SetNextEvent(0, 1, 1); got.FireAt != 2 {
		t.Errorf("SetNextEvent on a new session = %v, want FireAt 2", got)
	}
}

func TestOpenErrors(t *testing.T) {
	wrongName := newDevice("other")
	c, _ := pair(t,
		factory(sdk.KindClockEvent, "dev", newDevice("dev")),
		factory(sdk.KindClockEvent, "liar", wrongName),
		factory(sdk.KindTimerBase, "wheel", &shimtest.TimerBase{Base: shimtest.Base{InfoValue: sdk.Info{Kind: sdk.KindTimerBase, Name: "wheel"}}}),
	)
	tests := []struct {
		kind sdk.Kind
		name string
		want []string // substrings of the error
	}{
		{sdk.KindClockEvent, "nope", []string{"NotFound", `no clockevent plugin "nope"`, "[dev liar]"}},
		{sdk.KindClockEvent, "liar", []string{"protocol error", `got clockevent plugin "other"`}},
		{sdk.KindHRTimer, "dev", []string{"Unimplemented"}}, // kind not served by this process
	}
	for _, tt := range tests {
		p, err := shim.Open(c.Conn, tt.kind, tt.name, shim.Options{})
		if err == nil {
			t.Errorf("Open(%q, %q) = %T, want an error", tt.kind, tt.name, p)
			continue
		}
		var te *sdk.TransportError
		if !errors.As(err, &te) || te.Call != "Open" {
			t.Errorf("Open(%q, %q) error = %T %v, want a *sdk.TransportError during Open", tt.kind, tt.name, err, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%q, %q) = %v, want it to contain %q", tt.kind, tt.name, err, w)
			}
		}
	}
	if _, err := shim.Open(nil, "idle", "x", shim.Options{}); err == nil || !strings.Contains(err.Error(), `unknown plugin kind "idle"`) {
		t.Errorf(`Open(kind "idle") = %v, want unknown plugin kind`, err)
	}
}

// liarServer answers every TimerBase call with an Info: what a plugin built
// against a different protocol might do.
type liarServer struct {
	pb.UnimplementedTimerBaseServiceServer
}

func (liarServer) TimerBaseSession(s pb.TimerBaseService_TimerBaseSessionServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			return nil
		}
		info := &pb.Info{Kind: "wheel", Name: "liar"}
		resp := &pb.TimerBaseSessionResponse{Results: []*pb.TimerBaseResult{{Result: &pb.TimerBaseResult_Plugin{Plugin: &pb.PluginResponse{
			Result: &pb.PluginResponse_Open{Open: &pb.OpenResponse{Info: info}}}}}}}
		if err := s.Send(resp); err != nil {
			return err
		}
	}
}

func TestProtocolError(t *testing.T) {
	cc, srv := plugin.TestGRPCConn(t, func(s *grpc.Server) { pb.RegisterTimerBaseServiceServer(s, liarServer{}) })
	t.Cleanup(func() { _ = cc.Close(); srv.Stop() })
	p, err := shim.Open(cc, sdk.KindTimerBase, "liar", shim.Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	te := catchTransport(t, func() { p.(sdk.TimerBase).RunTimers(0, 1) })
	if te == nil || !strings.Contains(te.Error(), "protocol error: answer to RunTimers") {
		t.Errorf("RunTimers on a lying server = %v, want a protocol error", te)
	}
}

func TestClose(t *testing.T) {
	c, _ := pair(t, factory(sdk.KindClockEvent, "dev", newDevice("dev")))
	d := open(t, c, sdk.KindClockEvent, "dev", shim.Options{})
	d.(shim.Closer).Close()
	te := catchTransport(t, func() { d.Info() })
	if te == nil {
		t.Fatal("Info after Close returned, want a *sdk.TransportError panic")
	}
}

func TestCatalog(t *testing.T) {
	c, _ := pair(t,
		factory(sdk.KindClockEvent, "zeta", newDevice("zeta")),
		factory(sdk.KindTimerBase, "wheel", &shimtest.TimerBase{Base: shimtest.Base{
			InfoValue:   sdk.Info{Kind: sdk.KindTimerBase, Name: "wheel", Version: "0.1.0"},
			SchemaValue: sdk.Schema{Attributes: []sdk.Attribute{{Name: "layout", Type: sdk.TypeString, OneOf: []string{"levels", "cascade"}}}},
		}}),
		factory(sdk.KindClockEvent, "alpha", newDevice("alpha")),
	)
	raw, err := c.Dispense(shim.CatalogName)
	if err != nil {
		t.Fatalf("Dispense(catalog) = %v", err)
	}
	ds, err := raw.(*shim.CatalogClient).Describe(0)
	if err != nil {
		t.Fatalf("Describe() = %v", err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, string(d.Info.Kind)+"/"+d.Info.Name)
	}
	if want := "clockevent/alpha clockevent/zeta wheel/wheel"; strings.Join(got, " ") != want {
		t.Errorf("Describe() order = %v, want %s", got, want)
	}
	if a, ok := ds[2].Schema.Lookup("layout"); !ok || len(a.OneOf) != 2 || ds[2].Info.Version != "0.1.0" {
		t.Errorf("Describe()[2] = %+v, want wheel 0.1.0 with a layout attribute", ds[2])
	}
}

func TestServerPluginsRejects(t *testing.T) {
	dev := func() sdk.Plugin { return newDevice("d") }
	tests := []struct {
		name string
		fs   []sdk.Factory
		want string
	}{
		{"none", nil, "no plugin factories"},
		{"unknown kind", []sdk.Factory{{Kind: "idle", Name: "menu", New: dev}}, `unknown kind "idle"`},
		{"no name", []sdk.Factory{{Kind: sdk.KindClockEvent, New: dev}}, "needs a name"},
		{"no constructor", []sdk.Factory{{Kind: sdk.KindClockEvent, Name: "d"}}, "needs a name and a New"},
		{"duplicate", []sdk.Factory{{Kind: sdk.KindClockEvent, Name: "d", New: dev}, {Kind: sdk.KindClockEvent, Name: "d", New: dev}}, "served twice"},
	}
	for _, tt := range tests {
		_, err := shim.ServerPlugins(tt.fs, zerologNop)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ServerPlugins(%s) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestImplements(t *testing.T) {
	tests := []struct {
		kind sdk.Kind
		p    sdk.Plugin
		want bool
	}{
		{sdk.KindTimerBase, &shimtest.TimerBase{}, true},
		{sdk.KindTimerBase, &shimtest.ClockEventDevice{}, false},
		{sdk.KindHRTimer, &shimtest.HRTimerBase{}, true},
		{sdk.KindClockEvent, &shimtest.ClockEventDevice{}, true},
		{sdk.KindClockEvent, &shimtest.HRTimerBase{}, false},
		{"idle", &shimtest.HRTimerBase{}, false},
	}
	for _, tt := range tests {
		if got := shim.Implements(tt.kind, tt.p); got != tt.want {
			t.Errorf("Implements(%q, %T) = %v, want %v", tt.kind, tt.p, got, tt.want)
		}
	}
}
