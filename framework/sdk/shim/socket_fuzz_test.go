//go:build unix

package shim

import (
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
)

// FuzzSocketFrame: whatever bytes arrive on a session socket (a plugin
// built against another protocol, a stray writer), recv returns a message or
// an error and never panics or reads past the frame; a frame sent by send
// reads back as the same message.
func FuzzSocketFrame(f *testing.F) {
	good := &pb.ClockEventDeviceSessionRequest{Calls: []*pb.ClockEventDeviceCall{{Call: &pb.ClockEventDeviceCall_SetNextEvent{
		SetNextEvent: &pb.SetNextEventRequest{Ch: 1, Now: 1000, Ticks: 15}}}}}
	b, _ := proto.Marshal(good)
	f.Add(append([]byte{byte(len(b)), 0, 0, 0}, b...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{3, 0, 0, 0, 0x0a})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, r := &sockConn{fd: fds[0]}, &sockConn{fd: fds[1]}
		defer w.close()
		defer r.close()
		if len(data) > 0 {
			if _, err := syscall.Write(w.fd, data); err != nil {
				t.Fatal(err)
			}
		}
		w.shutdown() // the reader sees the end of the bytes, not a wait
		var m pb.ClockEventDeviceSessionRequest
		_ = r.recv(&m)

		// A frame written by send reads back equal.
		fds2, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		a, z := &sockConn{fd: fds2[0]}, &sockConn{fd: fds2[1]}
		defer a.close()
		defer z.close()
		want := &pb.ClockEventDeviceSessionRequest{Calls: []*pb.ClockEventDeviceCall{{Call: &pb.ClockEventDeviceCall_Spec{Spec: &pb.SpecRequest{}}}}}
		if len(data) > 0 {
			want.Calls = append(want.Calls, &pb.ClockEventDeviceCall{Call: &pb.ClockEventDeviceCall_SetNextEvent{
				SetNextEvent: &pb.SetNextEventRequest{Ch: int64(data[0]), Ticks: uint64(len(data))}}})
		}
		if err := a.send(want); err != nil {
			t.Fatal(err)
		}
		var got pb.ClockEventDeviceSessionRequest
		if err := z.recv(&got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(want, &got) {
			t.Fatalf("frame read back as %v, want %v", &got, want)
		}
	})
}
