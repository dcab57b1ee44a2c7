//go:build unix

package shim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"
)

// socketSupported: this platform has Unix stream sockets.
const socketSupported = true

// sockConn is one session's socket (see OpenResponse.socket_path): a Unix
// stream socket used with blocking read(2) and write(2) called directly, so
// a round trip is two wake-ups of the waiting threads and nothing else. The
// gRPC stream's round trip also crosses gRPC's reader and writer goroutines
// and HTTP/2 framing on both sides; that, not the payload (a few hundred
// bytes), is what makes it several times dearer on a loaded 2-core machine.
//
// Invariant: fd is in blocking mode and owned by the sockConn.
type sockConn struct {
	fd  int
	buf []byte // frame buffer, reused

	mu     sync.Mutex // orders shutdown (from any goroutine) and close
	closed bool
}

// rawFD returns a blocking duplicate of c's descriptor and closes c.
func rawFD(c *net.UnixConn) (int, error) {
	f, err := c.File()
	_ = c.Close()
	if err != nil {
		return -1, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	_ = f.Close()
	if err != nil {
		return -1, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// dialSocket connects to a session socket.
func dialSocket(path string) (*sockConn, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	fd, err := rawFD(c)
	if err != nil {
		return nil, err
	}
	return &sockConn{fd: fd}, nil
}

// socketListener is the server's end before the host connected.
type socketListener struct {
	l   *net.UnixListener
	dir string
}

// listenSocket makes a session socket in a fresh private directory under
// TMPDIR.
func listenSocket() (*socketListener, string, error) {
	dir, err := os.MkdirTemp("", "tickemu-session-")
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", err
	}
	return &socketListener{l: l, dir: dir}, path, nil
}

// accept waits up to wait for the host's one connection, then removes the
// socket's directory.
func (s *socketListener) accept(wait time.Duration) (*sockConn, error) {
	defer func() { _ = s.l.Close(); _ = os.RemoveAll(s.dir) }()
	_ = s.l.SetDeadline(time.Now().Add(wait))
	c, err := s.l.AcceptUnix()
	if err != nil {
		return nil, err
	}
	fd, err := rawFD(c)
	if err != nil {
		return nil, err
	}
	return &sockConn{fd: fd}, nil
}

// send writes m as one frame.
func (c *sockConn) send(m proto.Message) error {
	b, err := proto.MarshalOptions{}.MarshalAppend(append(c.buf[:0], 0, 0, 0, 0), m)
	if err != nil {
		return err
	}
	c.buf = b
	n := len(b) - 4
	if n > MaxMessageSize {
		return fmt.Errorf("shim: message of %d bytes is larger than the %d limit", n, MaxMessageSize)
	}
	binary.LittleEndian.PutUint32(b, uint32(n))
	for len(b) > 0 {
		w, err := syscall.Write(c.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return sockErr(err)
		}
		b = b[w:]
	}
	return nil
}

// recv reads one frame into m; io.EOF when the far side closed between
// frames.
func (c *sockConn) recv(m proto.Message) error {
	var hdr [4]byte
	if err := c.readFull(hdr[:], true); err != nil {
		return err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n > MaxMessageSize {
		return fmt.Errorf("shim: frame of %d bytes is larger than the %d limit", n, MaxMessageSize)
	}
	if cap(c.buf) < int(n) {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	if err := c.readFull(b, false); err != nil {
		return err
	}
	return proto.Unmarshal(b, m)
}

func (c *sockConn) readFull(b []byte, first bool) error {
	for got := 0; got < len(b); {
		r, err := syscall.Read(c.fd, b[got:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return sockErr(err)
		}
		if r == 0 {
			if first && got == 0 {
				return io.EOF
			}
			return io.ErrUnexpectedEOF
		}
		got += r
	}
	return nil
}

// shutdown unblocks a read or write in progress (another goroutine's), as
// the call deadline or Close need.
func (c *sockConn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
}

// close releases the descriptor; later shutdowns do nothing.
func (c *sockConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		_ = syscall.Close(c.fd)
	}
}

// sockErr maps a broken connection to io.ErrUnexpectedEOF, which the
// session reports as the plugin having gone (transportError).
func sockErr(err error) error {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w (%v)", io.ErrUnexpectedEOF, err)
	}
	return err
}
