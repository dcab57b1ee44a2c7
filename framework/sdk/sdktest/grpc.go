package sdktest

import (
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// GRPCPair returns a fresh plugin made by f, reached through tickemu's real
// gRPC transport: a go-plugin client and server connected inside the test
// process (go-plugin's TestPluginGRPCConn). Every call is marshalled, sent
// over a Unix socket, dispatched to the plugin and answered exactly as it is
// for a plugin process, so a conformance suite run on it proves the plugin
// behaves the same over the wire:
//
//	sdktest.RunClockEventDevice(t, func(t *testing.T, role sdk.Role) sdk.ClockEventDevice {
//		return sdktest.GRPCPair(t, myplugin.Factory).(sdk.ClockEventDevice)
//	})
//
// The result implements f.Kind's interface. Its logger (sdk.LoggerSetter)
// writes to the test log. The pair is torn down when the test ends. A
// transport failure panics with *sdk.TransportError, as in a run.
func GRPCPair(t testing.TB, f sdk.Factory) sdk.Plugin {
	t.Helper()
	sets, err := shim.ServerPlugins([]sdk.Factory{f}, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatalf("GRPCPair(%s/%s): %v", f.Kind, f.Name, err)
	}
	// client.Close stops the server too (go-plugin's controller Shutdown).
	client, _ := plugin.TestPluginGRPCConn(t, false, sets[sdk.ProtocolVersion])
	p, err := shim.Open(client.Conn, f.Kind, f.Name, shim.Options{})
	if err != nil {
		_ = client.Close()
		t.Fatalf("GRPCPair(%s/%s): %v", f.Kind, f.Name, err)
	}
	t.Cleanup(func() {
		p.(shim.Closer).Close()
		_ = client.Close()
	})
	return p
}
