package shim

import (
	"strings"
	"testing"
)

func TestParseReattach(t *testing.T) {
	good := `{"clockevent/fixed":{"protocol":"grpc","protocol_version":1,"pid":42,"network":"unix","address":"/tmp/p/plugin1"}}`
	r, err := ParseReattach(good)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := r["clockevent/fixed"].Config()
	if err != nil || rc.Pid != 42 || !rc.Test || rc.Addr.String() != "/tmp/p/plugin1" || rc.ProtocolVersion != 1 {
		t.Errorf("Config() = %+v, %v; want pid 42, Test, the unix address", rc, err)
	}
	for _, tt := range []struct{ in, want string }{
		{`nope`, "want the JSON line"},
		{`{"fixed":{"network":"unix","address":"/x"}}`, `key "fixed": want KIND/NAME`},
		{`{"clockevent/fixed":{"pid":1}}`, "no network address"},
		{`{"clockevent/fixed":{"protocol":"netrpc","network":"unix","address":"/x"}}`, `protocol "netrpc"`},
	} {
		if _, err := ParseReattach(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseReattach(%s) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
	if _, err := (ReattachAddr{Network: "udp", Address: "x"}).Config(); err == nil {
		t.Error("Config() of a udp address succeeded, want an error")
	}
}

func TestPluginFrames(t *testing.T) {
	stack := `goroutine 7 [running]:
runtime/debug.Stack()
	/go/src/runtime/debug/stack.go:26 +0x5e
github.com/tickemu/tickemu/framework/sdk/shim.(*registry).guard.func1()
	/r/framework/sdk/shim/server.go:118 +0x7a
panic({0xa876e0?, 0x1132e40?})
	/go/src/runtime/panic.go:860 +0x13a
example.com/dev.(*Device).helper(...)
	/m/dev.go:20
example.com/dev.(*Device).SetNextEvent(0x1, 0x0)
	/m/dev.go:147 +0x49
github.com/tickemu/tickemu/framework/sdk/shim.dispatchClockEventDevice({0xbb1f30?, 0x3?}, 0x3?)
	/r/framework/sdk/shim/clockevent.go:110 +0x4e7
google.golang.org/grpc.(*Server).processRPC(0x3)
	/g/server.go:1450 +0x122b
`
	got := strings.Join(pluginFrames(stack), "\n")
	want := `goroutine 7 [running]:
example.com/dev.(*Device).helper(...)
	/m/dev.go:20
example.com/dev.(*Device).SetNextEvent(0x1, 0x0)
	/m/dev.go:147 +0x49`
	if got != want {
		t.Errorf("pluginFrames =\n%s\nwant\n%s", got, want)
	}
	if odd := pluginFrames("no stack here"); len(odd) != 1 || odd[0] != "no stack here" {
		t.Errorf("pluginFrames(odd) = %q, want it unchanged", odd)
	}
}

// FuzzParseReattach: any value of TICKEMU_REATTACH_PLUGINS is parsed without
// panicking, and what it accepts has KIND/NAME keys and an address.
func FuzzParseReattach(f *testing.F) {
	f.Add(`{"clockevent/fixed":{"protocol":"grpc","protocol_version":2,"pid":42,"network":"unix","address":"/tmp/p/plugin1"}}`)
	f.Add(`{"wheel/w":{"network":"tcp","address":"127.0.0.1:1234"}}`)
	f.Add(`{"x":{}}`)
	f.Add(`[]`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReattach(s)
		if err != nil {
			return
		}
		for _, k := range r.Keys() {
			kind, name, ok := strings.Cut(k, "/")
			a := r[k]
			if !ok || kind == "" || name == "" || a.Network == "" || a.Address == "" {
				t.Fatalf("accepted %q: %+v", k, a)
			}
			if rc, err := a.Config(); err == nil && rc.Addr == nil {
				t.Fatalf("Config(%+v) has no address", a)
			}
		}
	})
}
