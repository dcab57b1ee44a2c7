// Package shim carries the framework/sdk plugin kinds over go-plugin gRPC.
//
// Client side: Open (or Conn.Open, what a go-plugin client dispenses for a
// kind) returns a value implementing the kind's sdk interface exactly, so the
// simulation cannot tell it from an in-process plugin. Server side:
// ServerPlugins wraps sdk factories for go-plugin's Serve (framework/sdk/serve).
// toproto and fromproto convert between sdk values and the tickemu.plugin.v2
// messages (generated into framework/sdk/internal/pb from the public .proto files
// of api/proto, described in docs/protocol.md), one function per message.
//
// # Protocol shape
//
// Each kind has one service with one bidirectional-streaming RPC, a session.
// The host opens a stream per plugin value, names the plugin in the first
// message (OpenRequest), then sends messages that each carry a batch of calls
// (a oneof of the kind's calls plus the sdk.Plugin calls every kind shares)
// and reads each message's answer, one result per call, before the next. One
// process can hold many sessions, e.g. the "local" and "broadcast" clockevent
// devices of one binary. A CatalogService lists what a binary serves without
// opening sessions. The one turn inside a message: a wheel or hrtimer base
// handed a policy (UsePolicy) may answer a message with a policy call first,
// which the host answers with the next request before the real answer comes
// (policypeer.go).
//
// Only the last call of a batch is one the host waits for. A clockevent device
// that declares a sdk.DeadlineModel (it comes with the Spec answer) has its
// SetNextEvent, Ack and oneshot state changes answered by the client from the
// model (model.Deadline) at once; the calls are held (batcher) and go out
// in front of the device's next waited-for call, or alone every maxBatch
// calls, and their real answers are checked against what the model gave: a
// difference ends the run as a contract violation of that call. The device
// still makes every call, in order, so its state and counters are those of
// an in-process run. On default.hcl this takes the cyclictest cycle from 9
// round trips (interrupt ack, hrtimer_interrupt, and a device write after each
// of the three hrtimer starts) to 5 (hrtimer_interrupt, three hrtimer starts,
// get_next_timer_interrupt).
//
// Timer bases declare per-CPU models the same way, but as state that changes
// with every call: a wheel implementing sdk.NextTimerModeler and an hrtimer
// base implementing sdk.HRTimerModeler are asked, by the server after the
// calls of each message, for the model of every CPU, and the answer carries
// those of the CPUs a call named and of those whose model changed
// (modelTracker). The client answers NextTimerInterrupt, Start, NextEvent
// and (in the eras that retry on expires_next) Interrupt from them (framework/sdk/model), updating its copy as the model says, and
// holds the calls like the device's; the hrtimer client also mirrors where
// each timer is queued and when the last interrupt or softirq ended, the part
// of sdk.HRTimerModel's precondition no CPU's model says. That takes the cycle
// to about one round trip under the always_stop governor (the governor's
// select); BenchmarkScenarios in framework/cli measures it for every shipped
// scenario.
//
// # Session sockets
//
// On Unix the host asks, in its OpenRequest, for the session to move off gRPC;
// the server answers with the path of a Unix socket it listens on for that
// session alone, the host connects, and from then on the same session messages
// travel on the socket (a 4-byte length and the protobuf bytes each), read and
// written with blocking read(2)/write(2) by the calling goroutine's thread on
// both sides. go-plugin still starts the process, does the handshake, carries
// its logs and kills it; the gRPC stream stays open as the session's control
// channel: a plugin panic ends the session with its status there, and the
// socket ends with the stream. A round trip is then two thread wake-ups instead
// of also crossing gRPC's transport goroutines and HTTP/2 framing on each side:
// BenchmarkRoundTrip measured 25 us against 41 us per call to a plugin
// process, and BenchmarkScenarios 1.4x to 4.7x less wall time per
// out-of-process scenario run (loaded 2-core machine). Options.GRPCOnly, or
// $TICKEMU_PLUGIN_TRANSPORT=grpc through the loader, keeps the stream.
//
// A long-lived stream instead of one unary RPC per call, because on the 2-core
// development machines a stream round trip costs about half a unary call
// between two go-plugin processes (16-64 B payloads, no TLS, p50/mean):
// 109/154 µs against 212/292 µs with other jobs running (load 10), 71/86 µs
// against 137/169 µs with GOMAXPROCS=1 in both processes (load 2.5); the
// design-time benchmark measured 73-115 µs against 100-165 µs
// (docs/reference/plugin-transport.md §1). The host already
// makes one call per interrupt, softirq or timer operation (sdk's declared
// callbacks), so the round trip is the whole cost; BenchmarkRoundTrip in
// framework/loader measures it for the shipped code.
//
// # Failures
//
// The sdk interfaces have no error returns (they are on the hot path), so a
// failed call panics with a *sdk.TransportError and the host's run loop
// recovers it. Errors are mapped in one place (session.transportError, the
// Nomad HandleGrpcErr idea): Unavailable, Canceled or a closed stream once the
// plugin's process has exited wrap sdk.ErrPluginExited and say how it exited
// ("signal: killed") with the last lines of its stderr; no answer within the
// call deadline (callDeadline: DefaultCallTimeout, 5 s, or Options.CallTimeout,
// time the host or the plugin waited for a CPU not counted: cpuwait)
// wraps sdk.ErrPluginTimeout, and the plugin's process group is killed then. A panic
// inside a plugin ends its session with codes.Internal carrying the panic
// value (the stack goes to the plugin's log) instead of killing the process.
// After a failure the session is dead and every later call panics with the
// same error: a run never continues past a transport failure, and nothing is
// retried (that would break determinism).
//
// Problems a plugin reports to the user (Configure's Diagnostics) are ordinary
// answers, not transport errors.
package shim
