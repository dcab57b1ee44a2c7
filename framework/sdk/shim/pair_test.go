package shim_test

import (
	"reflect"
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// pair serves fs on an in-process go-plugin gRPC server and returns the
// connected client and the server (to stop it in tests).
func pair(t *testing.T, fs ...sdk.Factory) (*plugin.GRPCClient, *plugin.GRPCServer) {
	t.Helper()
	ps, err := shim.ServerPlugins(fs, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatalf("ServerPlugins(%v) = %v", fs, err)
	}
	c, s := plugin.TestPluginGRPCConn(t, false, ps[sdk.ProtocolVersion])
	// Close asks the server to stop (go-plugin's controller Shutdown);
	// stopping it here as well would race inside go-plugin.
	t.Cleanup(func() { _ = c.Close() })
	return c, s
}

// open opens kind/name on c.
func open(t *testing.T, c *plugin.GRPCClient, kind sdk.Kind, name string, o shim.Options) sdk.Plugin {
	t.Helper()
	raw, err := c.Dispense(string(kind))
	if err != nil {
		t.Fatalf("Dispense(%q) = %v", kind, err)
	}
	p, err := raw.(*shim.Conn).Open(name, o)
	if err != nil {
		t.Fatalf("Open(%q, %q) = %v", kind, name, err)
	}
	return p
}

// factory returns a factory whose New returns p.
func factory(kind sdk.Kind, name string, p sdk.Plugin) sdk.Factory {
	return sdk.Factory{Kind: kind, Name: name, New: func() sdk.Plugin { return p }}
}

// catchTransport runs f and returns the *sdk.TransportError it panicked with,
// or nil if it returned.
func catchTransport(t *testing.T, f func()) (te *sdk.TransportError) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			var ok bool
			if te, ok = r.(*sdk.TransportError); !ok {
				t.Fatalf("panic value = %T %v, want *sdk.TransportError", r, r)
			}
		}
	}()
	f()
	return nil
}

// requireAllSet fails the test if any field of v (recursively, through
// structs, slices and maps) is the zero value. Round-trip tests use it on
// their inputs, so a field added to an sdk type without a place on the wire
// makes them fail instead of passing on a zero.
func requireAllSet(t *testing.T, name string, v any) {
	t.Helper()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Slice, reflect.Map:
			if v.Len() == 0 {
				t.Errorf("%s%s is empty; set it so the round trip covers it", name, path)
			}
			if v.Kind() == reflect.Slice {
				for i := range v.Len() {
					walk(path+"[]", v.Index(i))
				}
			}
		default:
			if v.IsZero() {
				t.Errorf("%s%s is zero; set it so the round trip covers it", name, path)
			}
		}
	}
	walk("", reflect.ValueOf(v))
}

var zerologNop = zerolog.Nop()
